/// Everything PointsService exports: its RPCs, its database, its group commits (grants, spends), the process.
/// (Clawback results are counted once, by PaymentsService, which runs them.)
public struct PointsMetrics: Sendable {
    public let rpcServer: RPCServerMetrics
    public let database: DatabasePoolMetrics
    public let dependencies: DependencyMetrics
    public let certificates: CertificateExpiryMetrics
    public let grantsPerCommit: Histogram
    public let grantBatchesFailed: Counter
    public let spendsPerCommit: Histogram
    public let spendBatchesFailed: Counter

    public init(
        registry: MetricsRegistry,
        processSampler: @escaping @Sendable () -> ProcessSample? = ProcessSample.current
    ) throws(MetricsRegistrationError) {
        rpcServer = try RPCServerMetrics(registry: registry)
        database = try DatabasePoolMetrics(registry: registry)
        dependencies = try DependencyMetrics(registry: registry, dependencies: [.database])
        certificates = try CertificateExpiryMetrics(registry: registry)
        grantsPerCommit = try registry.makeHistogram(IAPMetricNames.pointsGrantsPerCommit)
        grantBatchesFailed = try registry.makeCounter(IAPMetricNames.pointsGrantBatchesFailed)
        spendsPerCommit = try registry.makeHistogram(IAPMetricNames.pointsSpendsPerCommit)
        spendBatchesFailed = try registry.makeCounter(IAPMetricNames.pointsSpendBatchesFailed)
        try ProcessMetrics.register(in: registry, sampler: processSampler)
    }

    /// One grant statement: how many grants it carried, and whether it failed as a whole.
    public func recordGrantCommit(grants: Int, failed: Bool) {
        grantsPerCommit.observe(Double(grants))
        if failed { grantBatchesFailed.increment() }
    }

    /// One spend statement: how many spends it carried, and whether it failed as a whole.
    public func recordSpendCommit(spends: Int, failed: Bool) {
        spendsPerCommit.observe(Double(spends))
        if failed { spendBatchesFailed.increment() }
    }
}
