/// Percentiles of a set of latencies (nearest-rank), in milliseconds.
public struct LatencySummary: Sendable {
    public var count: Int
    public var p50Milliseconds: Double
    public var p99Milliseconds: Double
    public var maxMilliseconds: Double

    public init(nanoseconds: [UInt64]) {
        let sorted = nanoseconds.sorted()
        count = sorted.count
        func rank(_ fraction: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = min(sorted.count - 1, max(0, Int((fraction * Double(sorted.count)).rounded(.up)) - 1))
            return Double(sorted[index]) / 1_000_000
        }
        p50Milliseconds = rank(0.50)
        p99Milliseconds = rank(0.99)
        maxMilliseconds = sorted.last.map { Double($0) / 1_000_000 } ?? 0
    }
}
