/// The RPCs a service handles (PaymentsService, PointsService).
public struct RPCServerMetrics: Sendable {
    public let requests: Counter
    public let requestDuration: Histogram

    public init(registry: MetricsRegistry) throws(MetricsRegistrationError) {
        requests = try registry.makeCounter(IAPMetricNames.rpcServerRequests)
        requestDuration = try registry.makeHistogram(IAPMetricNames.rpcServerRequestDuration)
    }

    /// One handled RPC: `method` its full path, `code` the status name sent.
    public func record(method: String, code: String, duration: Duration) {
        requests.labels(method, code).increment()
        requestDuration.labels(method).observe(duration)
    }
}
