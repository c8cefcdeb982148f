import AppStoreServerAPI
import AppStoreVerification
import AdminServer
import Foundation
import Metrics
import PostgresClient
import RPCRuntime
import ServiceKit

// PaymentsService: Apple JWS verification, the transaction record, App Store
// notifications and the verify→grant saga with its worker.
//   PaymentsService [serve]     run the gRPC server and the saga worker
//   PaymentsService migrate     apply database migrations and exit
//   PaymentsService verify-jws  check one JWS from stdin (support staff)
//   PaymentsService redrive     re-run a failed or stuck saga (operators)
//   PaymentsService reconcile   record Apple's view of a transaction or a user's (operators)
//   PaymentsService recover-notifications  feed a past window of notifications through (operators)
//   PaymentsService request-test-notification  check the notification URL (operators)
//   PaymentsService lookup-order  Apple's transactions of a customer's order id (support)
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "verify-jws" {
    exit(VerifyJWSCommand.run(arguments: Array(arguments.dropFirst())))
}
if arguments.first == "redrive" {
    exit(await RedriveCommand.run(arguments: Array(arguments.dropFirst())))
}
if arguments.first == "reconcile" {
    exit(await ReconcileCommand.run(arguments: Array(arguments.dropFirst())))
}
if arguments.first == "recover-notifications" {
    exit(await RecoverNotificationsCommand.run(arguments: Array(arguments.dropFirst())))
}
if arguments.first == "request-test-notification" {
    exit(await RequestTestNotificationCommand.run(arguments: Array(arguments.dropFirst())))
}
if arguments.first == "lookup-order" {
    exit(await LookupOrderCommand.run(arguments: Array(arguments.dropFirst())))
}

let shutdown = ShutdownSignal.install()
let options = ServiceRunner.options(
    program: "PaymentsService", summary: "Apple purchases to credits, exactly once (payments.v1.Payments)",
    specs: [
        StandardOptions.listen(default: "127.0.0.1:50051"), AdminListener.option(default: "127.0.0.1:9181"), StandardOptions.databaseURL, StandardOptions.databaseMaxConnections,
        StandardOptions.pointsAddresses, StandardOptions.pointsTLSCA, StandardOptions.pointsTLSServerName,
        OptionSpec(flag: nil, env: "SAGA_POLL_INTERVAL_MS", default: "1000", help: "How often the saga worker looks for due steps."),
        OptionSpec(flag: nil, env: "SAGA_LEASE_MS", default: "30000",
                   help: "How long a claimed saga step belongs to one worker before another may retry it (covers crashed workers)."),
        OptionSpec(flag: nil, env: "SAGA_RETRY_INITIAL_MS", default: "500", help: "First retry delay of a failed saga step (doubles each attempt)."),
        OptionSpec(flag: nil, env: "SAGA_RETRY_MAX_MS", default: "300000", help: "Longest retry delay of a failed saga step."),
        OptionSpec(flag: nil, env: "SAGA_STUCK_AFTER_SECONDS", default: "900",
                   help: "A purchase owing a ledger step longer than this counts in iap_saga_stuck_rows (the alert's threshold)."),
        StandardOptions.logLevel, StandardOptions.tlsCertificate, StandardOptions.tlsKey,
    ] + PaymentsCallerPolicy.optionSpecs + AppleVerificationSettings.optionSpecs + [AppleVerificationSettings.sandboxUserIdsSpec]
        + AppStoreAPISettings.optionSpecs + AppleSyncSettings.optionSpecs + ConsumptionSettings.optionSpecs,
    subcommands: [
        ("serve", "Run the gRPC server and the saga worker (default)."), ("migrate", "Apply database migrations and exit."),
        ("verify-jws", "Verify one JWS read from stdin; see `verify-jws --help`."),
        ("redrive", "Re-run a failed or stuck purchase saga; see `redrive --help`."),
        ("reconcile", "Record Apple's view of one transaction or one user's (App Store Server API); see `reconcile --help`."),
        ("recover-notifications", "Feed a past window of App Store notifications through; see `recover-notifications --help`."),
        ("request-test-notification", "Ask Apple for a TEST notification and report its delivery."),
        ("lookup-order", "Print Apple's verified transactions of an order id; see `lookup-order --help`."),
    ])

do {
    let logger = Logger(service: "payments", minimumLevel: try StandardOptions.logLevel(options.required("--log-level")))
    if !FaultInjection.armedPoints.isEmpty {
        logger.warning("FAULT_POINTS is set: this process will kill itself at those points (tests only)", ["points": FaultInjection.armedPoints.sorted().joined(separator: ",")])
    }
    let registry = MetricsRegistry()
    let metrics = try PaymentsMetrics(registry: registry)
    let pool = try ServiceDatabase.pool(options, applicationName: "payments-service")
    let backoff = RetryBackoff(
        initialDelayMilliseconds: try positiveSetting(options, "SAGA_RETRY_INITIAL_MS"),
        maximumDelayMilliseconds: try positiveSetting(options, "SAGA_RETRY_MAX_MS"),
        leaseMilliseconds: try positiveSetting(options, "SAGA_LEASE_MS"))
    let store = PaymentsStore(pool: pool, backoff: backoff)
    try await store.migrate()
    try await ServiceDatabase.finishIfMigrateOnly(options, logger: logger, pool: pool)

    let verifier = try AppleVerificationSettings.verifier(options)
    let pointsClient = try PointsConnection.client(options)
    let points = PointsLedger(client: pointsClient, metrics: metrics.rpcClient)
    let creditPolicy = try AppleVerificationSettings.creditPolicy(options, verifier: verifier)
    let pollMilliseconds = Int(try options.required("SAGA_POLL_INTERVAL_MS")) ?? 0
    guard (10...60_000).contains(pollMilliseconds) else { throw CommandLineError("SAGA_POLL_INTERVAL_MS must be 10...60000") }
    let syncSettings = try AppleSyncSettings(options)
    let consumptionSettings = try ConsumptionSettings(options)
    // Optional: without the key settings the service runs as before, and
    // the jobs that need Apple's view are off (said once, here).
    let apiConfiguration = try AppStoreAPISettings.configuration(
        options, logger: logger, attempts: AppStoreAPIAttemptRecorder(metrics: metrics))
    let appStoreAPI = try apiConfiguration.map { try AppStoreServerAPIClient(configuration: $0) }
    if consumptionSettings.enabled && appStoreAPI == nil {
        throw CommandLineError("CONSUMPTION_ANSWERS=on needs the App Store Server API settings (APPLE_API_KEY_PATH, APPLE_API_KEY_ID, APPLE_API_ISSUER_ID)")
    }
    let consumption = ConsumptionAnswerer(store: store, points: points, client: appStoreAPI, settings: consumptionSettings, logger: logger)
    let processor = PaymentProcessor(
        store: store, verifier: verifier, points: points, catalog: CatalogCache(points: points), logger: logger, creditPolicy: creditPolicy,
        consumption: consumption, metrics: metrics)
    try ChainCacheCollector.register(verifier: verifier, metrics: metrics, in: registry)
    guard let stuckAfterSeconds = Int64(try options.required("SAGA_STUCK_AFTER_SECONDS")), (1...86_400 * 30).contains(stuckAfterSeconds) else {
        throw CommandLineError("SAGA_STUCK_AFTER_SECONDS must be 1...2592000")
    }
    if let configuration = apiConfiguration {
        logger.notice("App Store Server API configured: notification recovery and reconciliation jobs run at these intervals (0 = off)",
                      syncSettings.summary.merging(["key_id": configuration.credentials.keyID]) { $1 })
    } else {
        logger.notice("App Store Server API settings (APPLE_API_KEY_PATH, APPLE_API_KEY_ID, APPLE_API_ISSUER_ID) are not set: "
            + "notification recovery and reconciliation jobs are off")
    }

    let monitor = HealthMonitor()
    let probes = ServiceDatabase.watch(pool, monitor: monitor)
    let poolSampler = DatabasePoolSampler.start(pool, metrics: metrics.database, dependencies: metrics.dependencies, monitor: monitor)
    let pointsProbe = PointsReadiness(client: pointsClient, dependencies: metrics.dependencies)
    let pointsProbeTask = Task { await pointsProbe.run() }
    let backlogSampler = SagaBacklogSampler.start(store: store, metrics: metrics, stuckAfter: .seconds(stuckAfterSeconds), logger: logger)
    let worker = Task { await SagaWorker(runner: processor.runner, pollInterval: .milliseconds(pollMilliseconds)).run() }
    let consumptionWorker = Task { await consumption.run() }
    let syncJobs = appStoreAPI.map { AppleSyncJobs.start(client: $0, processor: processor, settings: syncSettings, logger: logger) } ?? []
    var router = Router()
    router.intercept(with: RPCMetricsInterceptor(metrics: metrics.rpcServer))
    HealthService.register(on: &router, monitor: monitor, serviceNames: ["payments.v1.Payments"])
    PaymentsRPCService(processor: processor, receipts: ReceiptCrediting(processor: processor, client: appStoreAPI)).register(on: &router)
    let listen = try HostAndPort(parsing: options.required("--listen"))
    let tls = try InternalAuth.serverTLS(options, listen: listen)
    InternalAuth.authorize(&router, policy: try PaymentsCallerPolicy.make(options), mode: try InternalAuth.mode(options), logger: logger)
    let admin = try await AdminListener.start(
        name: "PaymentsService", listen: try AdminListener.address(options), registry: registry, logger: logger
    ) { pointsProbe.readiness(combinedWith: AdminListener.readiness(of: monitor)) }
    try await ServiceRunner.serve(
        name: "PaymentsService", listen: listen, tls: tls,
        router: router, monitor: monitor, logger: logger, shutdown: shutdown
    ) {
        worker.cancel()
        consumptionWorker.cancel()
        for job in syncJobs { job.cancel() }
        await worker.value
        await consumptionWorker.value
        for job in syncJobs { await job.value }
        probes.cancel()
        poolSampler.cancel()
        backlogSampler.cancel()
        pointsProbeTask.cancel()
        await admin?.shutdown()
        await appStoreAPI?.close()
        await pointsClient.close()
        await pool.close()
    }
} catch {
    FileHandle.standardError.write(Data("PaymentsService: \(error)\n".utf8))
    exit(1)
}

func positiveSetting(_ options: CommandLineOptions, _ name: String) throws -> Int64 {
    guard let value = Int64(try options.required(name)), value > 0, value <= 86_400_000 else {
        throw CommandLineError("\(name) must be a positive number of milliseconds")
    }
    return value
}
