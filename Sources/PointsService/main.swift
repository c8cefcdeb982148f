import AdminServer
import Foundation
import Metrics
import PostgresClient
import RPCRuntime
import ServiceKit

// PointsService: balances, the ledger, starter-pack claims and the catalog.
// `PointsService [serve]` runs the gRPC server (migrating first);
// `PointsService migrate` only applies the schema migrations;
// `PointsService adjust ...` writes one operator adjustment and exits (it
// has its own flags, so it is recognised before the service's options).
if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "adjust" {
    let outcome = await AdjustCommandLine.run(arguments: Array(CommandLine.arguments.dropFirst(2)),
                                              environment: ProcessInfo.processInfo.environment)
    FileHandle.standardOutput.write(Data(outcome.standardOutput.utf8))
    FileHandle.standardError.write(Data(outcome.standardError.utf8))
    exit(outcome.status)
}
let shutdown = ShutdownSignal.install()
let options = ServiceRunner.options(
    program: "PointsService", summary: "balances, ledger, starter-pack claims and package catalog (points.v1.Points)",
    specs: [
        StandardOptions.listen(default: "127.0.0.1:50052"), AdminListener.option(default: "127.0.0.1:9182"), StandardOptions.databaseURL, StandardOptions.databaseMaxConnections,
        OptionSpec(flag: nil, env: "PACKAGES_FILE", default: "config/packages.json", help: "The package catalog (JSON)."),
        StandardOptions.logLevel, StandardOptions.tlsCertificate, StandardOptions.tlsKey,
    ] + PointsCallerPolicy.optionSpecs,
    subcommands: [("serve", "Run the gRPC server (default)."), ("migrate", "Apply database migrations and exit."),
                  ("adjust", "Operators: one audited balance adjustment; must come first (see PointsService adjust --help).")])

do {
    let logger = Logger(service: "points", minimumLevel: try StandardOptions.logLevel(options.required("--log-level")))
    if !FaultInjection.armedPoints.isEmpty {
        logger.warning("FAULT_POINTS is set: this process will kill itself at those points (tests only)", ["points": FaultInjection.armedPoints.sorted().joined(separator: ",")])
    }
    let catalog = try PackageCatalog.load(path: try options.required("PACKAGES_FILE"))
    let pool = try ServiceDatabase.pool(options, applicationName: "points-service")
    let store = PointsStore(pool: pool, catalog: catalog)
    try await store.migrate()
    try await ServiceDatabase.finishIfMigrateOnly(options, logger: logger, pool: pool)

    let registry = MetricsRegistry()
    let metrics = try PointsMetrics(registry: registry)
    let monitor = HealthMonitor()
    let probes = ServiceDatabase.watch(pool, monitor: monitor)
    let poolSampler = DatabasePoolSampler.start(pool, metrics: metrics.database, dependencies: metrics.dependencies, monitor: monitor)
    var router = Router()
    router.intercept(with: RPCMetricsInterceptor(metrics: metrics.rpcServer))
    HealthService.register(on: &router, monitor: monitor, serviceNames: ["points.v1.Points"])
    PointsRPCService(store: store, logger: logger).register(on: &router)
    let listen = try HostAndPort(parsing: options.required("--listen"))
    let tls = try InternalAuth.serverTLS(options, listen: listen)
    InternalAuth.authorize(&router, policy: try PointsCallerPolicy.make(options), mode: try InternalAuth.mode(options), logger: logger)
    let admin = try await AdminListener.start(
        name: "PointsService", listen: try AdminListener.address(options), registry: registry, logger: logger
    ) { AdminListener.readiness(of: monitor) }
    try await ServiceRunner.serve(
        name: "PointsService", listen: listen, tls: tls,
        router: router, monitor: monitor, logger: logger, shutdown: shutdown
    ) {
        probes.cancel()
        poolSampler.cancel()
        await admin?.shutdown()
        await pool.close()
    }
} catch {
    FileHandle.standardError.write(Data("PointsService: \(error)\n".utf8))
    exit(1)
}
