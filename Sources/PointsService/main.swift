import AdminServer
import Foundation
import Logging
import Metrics
import PostgresClient
import RPCCore
import RPCHealthService
import RPCRuntime
import ServiceKit
import ServiceKitDatabase

// PointsService: balances, the ledger, starter-pack claims and the catalog.
// `PointsService [serve]` runs the gRPC server (migrating first);
// `PointsService migrate` only applies the schema migrations;
// `PointsService adjust ...` writes one operator adjustment and exits (it
// has its own flags, so it is recognised before the service's options).
if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "adjust" {
    let outcome = await AdjustCommandLine.run(
        arguments: Array(CommandLine.arguments.dropFirst(2)),
        environment: ProcessInfo.processInfo.environment)
    FileHandle.standardOutput.write(Data(outcome.standardOutput.utf8))
    FileHandle.standardError.write(Data(outcome.standardError.utf8))
    exit(outcome.status)
}
let shutdown = ShutdownSignal.install()
let options = ServiceRunner.options(
    program: "PointsService", summary: "balances, ledger, starter-pack claims and package catalog (points.v1.Points)",
    specs: PointsSettings.specs,
    subcommands: [
        ("serve", "Run the gRPC server (default)."), ("migrate", "Apply database migrations and exit."),
        ("adjust", "Operators: one audited balance adjustment; must come first (see PointsService adjust --help)."),
    ])
// Every setting is checked before anything connects; all problems at once, exit 2.
// `migrate` neither listens nor authenticates callers: it needs only the database.
let serving = options.positional.first != "migrate"
let settings = ServiceRunner.settings(program: "PointsService", options: options) {
    PointsSettings.read(&$0, serving: serving)
}

do {
    let logger = Logger(service: "points", minimumLevel: settings.logLevel)
    if !FaultInjection.armedPoints.isEmpty {
        logger.warning(
            "FAULT_POINTS is set: this process will kill itself at those points (tests only)",
            ["points": FaultInjection.armedPoints.sorted().joined(separator: ",")])
    }
    let registry = MetricsRegistry()
    let metrics = try PointsMetrics(registry: registry)
    // One loop for the gRPC server, its handlers and the pool's sockets: a
    // call is read, runs its statement and is answered on one thread
    // (docs/ARCHITECTURE.md, "Tasks on a loop"), its steps within one
    // iteration of the loop. Stopped last.
    let loop = try EventLoop(name: "points", submittedRoundsPerIterationMax: EventLoop.submittedRoundsForServingLoop)
    let pool = ServiceDatabase.pool(
        settings.database, applicationName: "points-service", logger: logger,
        socketEvents: EventLoopSocketEvents(loop: loop))
    let store = PointsStore(
        pool: pool, catalog: settings.catalog, observeGrantCommits: metrics.recordGrantCommit,
        observeSpendCommits: metrics.recordSpendCommit, batchExecutor: loop)
    try await store.migrate()
    try await ServiceDatabase.finishIfMigrateOnly(options, logger: logger, pool: pool)
    guard let server = settings.serving else { preconditionFailure("serve reads the server's settings") }
    try CertificateExpiryCheck.check([server.tls], metrics: metrics.certificates, logger: logger)

    let monitor = HealthMonitor()
    let probes = ServiceDatabase.watch(pool, monitor: monitor)
    let poolSampler = DatabasePoolSampler.start(
        pool, metrics: metrics.database, dependencies: metrics.dependencies, monitor: monitor)
    var router = Router()
    router.intercept(with: RPCMetricsInterceptor(metrics: metrics.rpcServer))
    HealthService.register(on: &router, monitor: monitor, serviceNames: ["points.v1.Points"])
    PointsRPCService(store: store, logger: logger).register(on: &router)
    InternalAuth.authorize(&router, policy: server.callerPolicy, mode: server.internalAuth, logger: logger)
    let admin = try await AdminListener.start(
        name: "PointsService", listen: server.adminListen, registry: registry, logger: logger
    ) { AdminListener.readiness(of: monitor) }
    try await ServiceRunner.serve(
        name: "PointsService", listen: server.listen, tls: server.tls,
        router: router, monitor: monitor, logger: logger, shutdown: shutdown, handlersOnLoop: true, loop: loop
    ) {
        probes.cancel()
        poolSampler.cancel()
        await admin?.shutdown()
        await pool.close()
        await loop.shutdown()
    }
} catch {
    FileHandle.standardError.write(Data("PointsService: \(error)\n".utf8))
    exit(1)
}
