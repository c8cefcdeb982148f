/// Everything the gateway exports: its HTTP answers, its calls to the
/// services, what /readyz's probe sees, and the process.
public struct GatewayMetrics: Sendable {
    public let httpRequests: Counter
    public let httpRequestDuration: Histogram
    public let httpProblems: Counter
    public let httpRefusals: Counter
    public let rpcClient: RPCClientMetrics
    /// Balance reads each GetBalances call carried (`BalanceReadBatcher`).
    public let balanceReadsPerCall: Histogram
    public let dependencies: DependencyMetrics
    public let certificates: CertificateExpiryMetrics

    /// Registers the gateway's families (and the process metrics, read by
    /// `processSampler`) in `registry`.
    public init(
        registry: MetricsRegistry,
        processSampler: @escaping @Sendable () -> ProcessSample? = ProcessSample.current
    ) throws(MetricsRegistrationError) {
        httpRequests = try registry.makeCounter(IAPMetricNames.httpRequests)
        httpRequestDuration = try registry.makeHistogram(IAPMetricNames.httpRequestDuration)
        httpProblems = try registry.makeCounter(IAPMetricNames.httpProblems)
        httpRefusals = try registry.makeCounter(IAPMetricNames.httpRefusals)
        rpcClient = try RPCClientMetrics(registry: registry)
        balanceReadsPerCall = try registry.makeHistogram(IAPMetricNames.gatewayBalanceReadsPerCall)
        dependencies = try DependencyMetrics(registry: registry, dependencies: [.payments, .points])
        certificates = try CertificateExpiryMetrics(registry: registry)
        try ProcessMetrics.register(in: registry, sampler: processSampler)
    }

    /// One answered request. `route` is the matched route's pattern (or
    /// `IAPMetricLabels.unmatchedRoute`), `problemCode` the `ProblemCode`
    /// raw value when the answer was a problem.
    /// A 405 is counted with method `other`: its method is one the route
    /// does not serve, chosen by the client, and (route × method) pairs of
    /// anonymous 405s would otherwise fill the families' series tables and
    /// push real pairs not yet seen into `other`.
    public func recordRequest(
        route: String, method: String, status: Int, duration: Duration, problemCode: String? = nil
    ) {
        let methodLabel = status == 405 ? IAPMetricLabels.otherMethod : IAPMetricLabels.method(method)
        httpRequests.labels(route, methodLabel, String(status)).increment()
        httpRequestDuration.labels(route, methodLabel).observe(duration)
        if let problemCode { httpProblems.labels(route, problemCode).increment() }
    }

    /// One request refused for want of capacity (also recorded by `recordRequest`).
    public func recordRefusal(_ reason: RefusalReasonLabel) {
        httpRefusals.labels(reason.rawValue).increment()
    }
}
