import Locking

/// One label set of a histogram: how many observations fell at or below
/// each upper bound, their sum and their count. Counts are kept per bucket
/// and made cumulative when rendered, so an observation touches one slot.
public final class HistogramSeries: Sendable {
    /// Per-bucket counts (the last slot is `+Inf`), sum and count, changed
    /// together under one lock so a scrape never sees a count that
    /// disagrees with its buckets.
    struct Counts: Sendable {
        var buckets: [UInt64]
        var sum: Double
        var count: UInt64
    }

    /// The upper bounds, strictly increasing, `+Inf` not included.
    let upperBounds: [Double]
    private let counts: Mutex<Counts>

    init(upperBounds: [Double]) {
        self.upperBounds = upperBounds
        counts = Mutex(Counts(buckets: Array(repeating: 0, count: upperBounds.count + 1), sum: 0, count: 0))
    }

    /// Records one observation. NaN is dropped (it stops the process in debug
    /// builds): it belongs to no bucket and would make `_sum` NaN for good.
    public func observe(_ value: Double) {
        guard !value.isNaN else {
            assertionFailure("a histogram observation must not be NaN")
            return
        }
        let index = bucketIndex(value)
        counts.withLock { counts in
            counts.buckets[index] &+= 1
            counts.sum += value
            counts.count &+= 1
        }
    }

    /// Records a duration in seconds (the unit every latency histogram uses).
    public func observe(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        observe(Double(seconds) + Double(attoseconds) * 1e-18)
    }

    /// The first bucket whose upper bound is at least `value` (`le` is
    /// inclusive), by binary search; the `+Inf` slot when none is.
    func bucketIndex(_ value: Double) -> Int {
        var low = 0, high = upperBounds.count
        while low < high {
            let middle = (low + high) / 2
            if value <= upperBounds[middle] { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// A consistent copy of the counts (per bucket, not cumulative).
    func snapshot() -> Counts {
        counts.withLock { $0 }
    }

    /// Observations so far.
    public var count: UInt64 { counts.withLock { $0.count } }
    /// Their sum.
    public var sum: Double { counts.withLock { $0.sum } }
}
