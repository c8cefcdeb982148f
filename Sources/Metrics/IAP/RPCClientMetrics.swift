/// The RPCs a process makes to another service (the gateway, PaymentsService).
public struct RPCClientMetrics: Sendable {
    public let requests: Counter
    public let requestDuration: Histogram

    public init(registry: MetricsRegistry) throws(MetricsRegistrationError) {
        requests = try registry.makeCounter(IAPMetricNames.rpcClientRequests)
        requestDuration = try registry.makeHistogram(IAPMetricNames.rpcClientRequestDuration)
    }

    /// One finished call: `method` its full path, `code` the status name it ended with.
    public func record(method: String, code: String, duration: Duration) {
        requests.labels(method, code).increment()
        requestDuration.labels(method).observe(duration)
    }
}
