import AppStoreServerAPI
import AppStoreVerification
import Foundation
import Logging
import RPCRuntime
import ServiceKit
import ServiceKitDatabase

/// Everything `PaymentsService serve` reads from flags and the environment,
/// read in one place before anything connects: every missing or wrong value
/// is reported (`ServiceRunner.settings` prints them and exits 2).
struct PaymentsSettings: Sendable {
    var logLevel: LogLevel
    var database: ServiceDatabase.Settings
    var backoff: RetryBackoff
    /// What only `serve` needs (nil for `migrate`, which needs the database only).
    var serving: Serving?

    /// The server, the saga worker, Apple's settings and internal authentication.
    struct Serving: Sendable {
        var listen: HostAndPort
        /// The admin listener (/metrics, /livez, /readyz); nil when off.
        var adminListen: HostAndPort?
        var sagaPollInterval: Duration
        /// A purchase owing a ledger step longer than this counts as stuck (iap_saga_stuck_rows).
        var sagaStuckAfterSeconds: Int64
        var points: PointsConnection.Settings
        var verifier: SignedDataVerifier
        /// The signature check of StoreKit 1 app receipts (the receipt route).
        var receiptVerifier: AppReceiptSignatureVerifier
        var sandboxUserIds: Set<UUID>
        var sync: AppleSyncSettings
        var consumption: ConsumptionSettings
        /// nil: the App Store Server API settings are not set (the jobs that need it are off).
        var appStoreAPI: AppStoreServerAPIConfiguration?
        var internalAuth: InternalAuthMode
        var tls: TLSConfiguration?
        var callerPolicy: CallerPolicy
    }

    /// The saga steps' lease and retry timing: the service's and every
    /// command that runs saga steps (`redrive`, the admin commands), so a
    /// step they claim is leased as the service's worker leases it.
    static let backoffSpecs: [OptionSpec] = [
        OptionSpec(
            flag: nil, env: "SAGA_LEASE_MS", default: "30000",
            help:
                "How long a claimed saga step belongs to one worker before another may retry it (covers crashed workers)."
        ),
        OptionSpec(
            flag: nil, env: "SAGA_RETRY_INITIAL_MS", default: "500",
            help: "First retry delay of a failed saga step (doubles each attempt)."),
        OptionSpec(
            flag: nil, env: "SAGA_RETRY_MAX_MS", default: "300000", help: "Longest retry delay of a failed saga step."),
    ]

    static let sagaSpecs: [OptionSpec] =
        [
            OptionSpec(
                flag: nil, env: "SAGA_POLL_INTERVAL_MS", default: "1000",
                help: "How often the saga worker looks for due steps.")
        ] + backoffSpecs + [
            OptionSpec(
                flag: nil, env: "SAGA_STUCK_AFTER_SECONDS", default: "900",
                help:
                    "A purchase owing a ledger step longer than this counts in iap_saga_stuck_rows (the alert's threshold)."
            )
        ]

    /// Every option, in the order `--help` lists them (and problems are reported).
    static let specs: [OptionSpec] =
        [
            StandardOptions.listen(default: "127.0.0.1:50051"), AdminListener.option(default: "127.0.0.1:9181"),
            StandardOptions.databaseURL, StandardOptions.databaseMaxConnections,
            StandardOptions.pointsAddresses, StandardOptions.pointsTLSCA, StandardOptions.pointsTLSServerName,
        ] + sagaSpecs + [StandardOptions.logLevel, StandardOptions.tlsCertificate, StandardOptions.tlsKey]
        + PaymentsCallerPolicy.optionSpecs + AppleVerificationSettings.optionSpecs + [
            AppleVerificationSettings.sandboxUserIdsSpec
        ]
        + AppStoreAPISettings.optionSpecs + AppleSyncSettings.optionSpecs + ConsumptionSettings.optionSpecs

    /// Reads every setting `serving` needs (the server's too unless it is
    /// false), reporting each problem to `settings`; nil when there was one.
    static func read(_ settings: inout SettingsCollector, serving: Bool = true) -> PaymentsSettings? {
        let logLevel = settings.logLevel()
        let database = ServiceDatabase.Settings.read(&settings)
        let backoff = readBackoff(&settings)
        let server = serving ? readServing(&settings) : nil
        guard let logLevel, let database, let backoff, !serving || server != nil, settings.problems.isEmpty else {
            return nil
        }
        return PaymentsSettings(logLevel: logLevel, database: database, backoff: backoff, serving: server)
    }

    private static func readServing(_ settings: inout SettingsCollector) -> Serving? {
        let listen = settings.address("--listen", because: "it is the address PaymentsService accepts gRPC calls on")
        let adminListen = AdminListener.address(&settings)
        let points = PointsConnection.read(&settings)
        let poll = settings.integer(
            "SAGA_POLL_INTERVAL_MS", in: 10...60_000, unit: "of milliseconds",
            because: "it is how often the saga worker looks for due steps")
        let stuckAfter = settings.integer(
            "SAGA_STUCK_AFTER_SECONDS", in: 1...(86_400 * 30), unit: "of seconds",
            because: "a purchase owing a ledger step longer than this counts as stuck, which an alert watches")
        let verifier = AppleVerificationSettings.verifier(&settings)
        let receiptVerifier = AppleVerificationSettings.receiptVerifier(&settings)
        let sandboxText = settings.value("APPLE_SANDBOX_USER_IDS") ?? ""
        let sandboxUserIds = settings.read { () throws(SettingProblem) in
            try AppleVerificationSettings.sandboxUserIds(sandboxText)
        }
        let sync = AppleSyncSettings.read(&settings)
        let consumption = ConsumptionSettings.read(&settings)
        let appStoreAPI = AppStoreAPISettings.read(&settings)
        if consumption?.enabled == true, case .some(nil) = appStoreAPI {
            settings.report(
                SettingProblem(
                    "CONSUMPTION_ANSWERS",
                    "must be off unless APPLE_API_KEY_PATH, APPLE_API_KEY_ID and APPLE_API_ISSUER_ID are set",
                    because: "consumption answers are sent through the App Store Server API"))
        }
        let mode = InternalAuth.mode(&settings)
        let tls = InternalAuth.serverTLS(&settings, listen: listen)
        let policy = PaymentsCallerPolicy.read(&settings)
        guard let listen, let adminListen, let points, let poll, let stuckAfter, let verifier, let receiptVerifier,
            let sandboxUserIds, let sync, let consumption, let appStoreAPI, let mode,
            let policy
        else { return nil }
        return Serving(
            listen: listen, adminListen: adminListen, sagaPollInterval: .milliseconds(poll),
            sagaStuckAfterSeconds: stuckAfter, points: points, verifier: verifier,
            receiptVerifier: receiptVerifier, sandboxUserIds: sandboxUserIds, sync: sync,
            consumption: consumption, appStoreAPI: appStoreAPI, internalAuth: mode, tls: tls, callerPolicy: policy)
    }

    /// The saga steps' retry timing (`SAGA_RETRY_*`, `SAGA_LEASE_MS`,
    /// `backoffSpecs`): the store needs it, `migrate` and the commands too.
    static func readBackoff(_ settings: inout SettingsCollector) -> RetryBackoff? {
        let day: Int64 = 86_400_000
        let initial = settings.integer(
            "SAGA_RETRY_INITIAL_MS", in: 1...day, unit: "of milliseconds",
            because: "it is the first wait before a failed saga step is tried again")
        let maximum = settings.integer(
            "SAGA_RETRY_MAX_MS", in: 1...day, unit: "of milliseconds",
            because: "it caps the doubling wait between retries of a failed saga step")
        let lease = settings.integer(
            "SAGA_LEASE_MS", in: RetryBackoff.leaseMillisecondsMin...day, unit: "of milliseconds",
            because:
                "a step claimed by a worker that stopped is retried by another after it, and its call into PointsService gets half of it (at most 5 s)"
        )
        guard let initial, let maximum, let lease else { return nil }
        return RetryBackoff(
            initialDelayMilliseconds: initial, maximumDelayMilliseconds: maximum, leaseMilliseconds: lease)
    }
}
