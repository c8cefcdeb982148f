/// A histogram's upper bounds (`le`), strictly increasing and finite; the
/// `+Inf` bucket is always added when rendering.
public struct HistogramBuckets: Sendable, Equatable {
    public let upperBounds: [Double]

    /// The bounds as given; checked when the histogram is registered.
    public init(_ upperBounds: [Double]) {
        self.upperBounds = upperBounds
    }

    /// Request latency in seconds, 5 ms to 10 s (the bounds of Prometheus's
    /// own clients, so dashboards and `histogram_quantile` read alike).
    public static let defaultLatencySeconds = HistogramBuckets([
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ])

    /// Waits for a pooled database connection in seconds, 0.5 ms up to the
    /// pool's 5 s acquire timeout.
    public static let poolWaitSeconds = HistogramBuckets([
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
    ])

    /// Writes one group commit carried (PointsService's grant batches), 1 to
    /// the batch bound of 64.
    public static let writesPerCommit = HistogramBuckets([1, 2, 4, 8, 16, 32, 64])

    /// Calls to Apple's App Store Server API in seconds: a round trip across
    /// the internet, retries' waits not included, up to the 30 s timeout.
    public static let remoteCallSeconds = HistogramBuckets([0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30])

    /// Why these bounds cannot make a histogram, or nil when they can.
    var problem: String? {
        if upperBounds.isEmpty { return "no upper bounds" }
        if upperBounds.count > MetricsLimits.bucketsMax {
            return "\(upperBounds.count) upper bounds, at most \(MetricsLimits.bucketsMax)"
        }
        if let bad = upperBounds.first(where: { !$0.isFinite }) {
            return "upper bound \(bad) is not finite (+Inf is added by itself)"
        }
        for index in upperBounds.indices.dropFirst() where upperBounds[index] <= upperBounds[index - 1] {
            return "upper bounds must increase strictly: \(upperBounds[index - 1]) then \(upperBounds[index])"
        }
        return nil
    }
}
