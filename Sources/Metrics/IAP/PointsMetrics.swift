/// Everything PointsService exports: its RPCs, its database, the process.
/// (Clawback results are counted once, by PaymentsService, which runs them.)
public struct PointsMetrics: Sendable {
    public let rpcServer: RPCServerMetrics
    public let database: DatabasePoolMetrics
    public let dependencies: DependencyMetrics

    public init(registry: MetricsRegistry,
                processSampler: @escaping @Sendable () -> ProcessSample? = ProcessSample.current) throws(MetricsRegistrationError) {
        rpcServer = try RPCServerMetrics(registry: registry)
        database = try DatabasePoolMetrics(registry: registry)
        dependencies = try DependencyMetrics(registry: registry, dependencies: [.database])
        try ProcessMetrics.register(in: registry, sampler: processSampler)
    }
}
