/// One label set of a gauge: a value that goes up and down (connections in
/// use, rows waiting).
public final class GaugeSeries: Sendable {
    private let current = AtomicDouble(0)

    init() {}

    public func set(_ value: Double) { current.store(value) }
    public func increment(by amount: Double = 1) { current.add(amount) }
    public func decrement(by amount: Double = 1) { current.add(-amount) }

    /// The value now.
    public var value: Double { current.load() }
}
