import AppStoreServerAPI
import AppStoreVerification
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
    specs: PaymentsSettings.specs,
    subcommands: [
        ("serve", "Run the gRPC server and the saga worker (default)."),
        ("migrate", "Apply database migrations and exit."),
        ("verify-jws", "Verify one JWS read from stdin; see `verify-jws --help`."),
        ("redrive", "Re-run a failed or stuck purchase saga; see `redrive --help`."),
        (
            "reconcile",
            "Record Apple's view of one transaction or one user's (App Store Server API); see `reconcile --help`."
        ),
        (
            "recover-notifications",
            "Feed a past window of App Store notifications through; see `recover-notifications --help`."
        ),
        ("request-test-notification", "Ask Apple for a TEST notification and report its delivery."),
        ("lookup-order", "Print Apple's verified transactions of an order id; see `lookup-order --help`."),
    ])
// Every setting is checked before anything connects; all problems at once, exit 2.
// `migrate` neither listens nor calls anyone: it needs only the database.
let serving = options.positional.first != "migrate"
let settings = ServiceRunner.settings(program: "PaymentsService", options: options) {
    PaymentsSettings.read(&$0, serving: serving)
}

do {
    let logger = Logger(service: "payments", minimumLevel: settings.logLevel)
    if !FaultInjection.armedPoints.isEmpty {
        logger.warning(
            "FAULT_POINTS is set: this process will kill itself at those points (tests only)",
            ["points": FaultInjection.armedPoints.sorted().joined(separator: ",")])
    }
    let registry = MetricsRegistry()
    let metrics = try PaymentsMetrics(
        registry: registry, notificationTypes: NotificationType.knownValues.map(\.rawValue))
    let pool = ServiceDatabase.pool(settings.database, applicationName: "payments-service", logger: logger)
    let store = PaymentsStore(pool: pool, backoff: settings.backoff) { statement, writes, failed in
        metrics.recordSagaCommit(statement.label, writes: writes, failed: failed)
    }
    try await store.migrate()
    try await ServiceDatabase.finishIfMigrateOnly(options, logger: logger, pool: pool)
    guard let server = settings.serving else { preconditionFailure("serve reads the server's settings") }
    try CertificateExpiryCheck.check([server.tls, server.points.tls], metrics: metrics.certificates, logger: logger)

    let verifier = server.verifier
    let pointsClient = try PointsConnection.client(server.points)
    let points = PointsLedger(client: pointsClient, backoff: settings.backoff, metrics: metrics.rpcClient)
    let creditPolicy = SandboxCreditPolicy(configuration: verifier.configuration, sandboxUserIds: server.sandboxUserIds)
    let syncSettings = server.sync
    let consumptionSettings = server.consumption
    // Optional: without the key settings the service runs as before, and
    // the jobs that need Apple's view are off (said once, here).
    var apiConfiguration = server.appStoreAPI
    let attempts = AppStoreAPIAttemptRecorder(metrics: metrics)
    apiConfiguration?.eventSink = { event in
        AppStoreAPISettings.log(event, logger)
        attempts.record(event)
    }
    let appStoreAPI = try apiConfiguration.map { try AppStoreServerAPIClient(configuration: $0) }
    let consumption = ConsumptionAnswerer(
        store: store, points: points, client: appStoreAPI, settings: consumptionSettings, logger: logger)
    let processor = PaymentProcessor(
        store: store, verifier: verifier, points: points, catalog: CatalogCache(points: points), logger: logger,
        creditPolicy: creditPolicy,
        consumption: consumption, metrics: metrics)
    try VerifierCountsCollector.register(verifier: verifier, metrics: metrics, in: registry)
    let stuckAfterSeconds = server.sagaStuckAfterSeconds
    if let configuration = apiConfiguration {
        logger.notice(
            "App Store Server API configured: notification recovery and reconciliation jobs run at these intervals (0 = off)",
            syncSettings.summary.merging(["key_id": configuration.credentials.keyID]) { $1 })
    } else {
        logger.notice(
            "App Store Server API settings (APPLE_API_KEY_PATH, APPLE_API_KEY_ID, APPLE_API_ISSUER_ID) are not set: "
                + "notification recovery and reconciliation jobs are off")
    }

    let monitor = HealthMonitor()
    let probes = ServiceDatabase.watch(pool, monitor: monitor)
    let poolSampler = DatabasePoolSampler.start(
        pool, metrics: metrics.database, dependencies: metrics.dependencies, monitor: monitor)
    let pointsProbe = PointsReadiness(client: pointsClient, dependencies: metrics.dependencies)
    let pointsProbeTask = Task { await pointsProbe.run() }
    let backlogSampler = SagaBacklogSampler.start(
        store: store, metrics: metrics, stuckAfter: .seconds(stuckAfterSeconds), logger: logger)
    let worker = Task { await SagaWorker(runner: processor.runner, pollInterval: server.sagaPollInterval).run() }
    let consumptionWorker = Task { await consumption.run() }
    let syncJobs =
        appStoreAPI.map {
            AppleSyncJobs.start(client: $0, processor: processor, settings: syncSettings, logger: logger)
        } ?? []
    var router = Router()
    router.intercept(with: RPCMetricsInterceptor(metrics: metrics.rpcServer))
    HealthService.register(on: &router, monitor: monitor, serviceNames: ["payments.v1.Payments"])
    PaymentsRPCService(
        processor: processor,
        receipts: ReceiptCrediting(processor: processor, client: appStoreAPI, signatureVerifier: server.receiptVerifier)
    ).register(on: &router)
    InternalAuth.authorize(&router, policy: server.callerPolicy, mode: server.internalAuth, logger: logger)
    let admin = try await AdminListener.start(
        name: "PaymentsService", listen: server.adminListen, registry: registry, logger: logger
    ) { pointsProbe.readiness(combinedWith: AdminListener.readiness(of: monitor)) }
    try await ServiceRunner.serve(
        name: "PaymentsService", listen: server.listen, tls: server.tls,
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
