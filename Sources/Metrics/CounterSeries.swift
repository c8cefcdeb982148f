/// One label set of a counter: a total that only goes up (it restarts at
/// zero with the process; Prometheus's `rate` and `increase` handle that).
/// Keep the handle `labels(...)` returns when the label set is fixed: an
/// increment is then one atomic add.
public final class CounterSeries: Sendable {
    private let total = AtomicDouble(0)

    init() {}

    /// Adds `amount` (default 1). A negative, NaN or infinite amount is a
    /// programming error: it stops the process in debug builds and is
    /// ignored in release builds, where a counter that went down would read
    /// as a restart.
    public func increment(by amount: Double = 1) {
        guard amount >= 0, amount.isFinite else {
            assertionFailure("a counter increment must be finite and not negative, got \(amount)")
            return
        }
        total.add(amount)
    }

    /// The total so far.
    public var value: Double { total.load() }

    /// Sets the total from a source that already counts (the process's CPU
    /// time in /proc); only for render-time collectors of this module.
    func setTotal(_ value: Double) {
        total.store(value)
    }
}
