import AppStoreServerAPI
import AppStoreVerification
import FieldRules
import Foundation
import Logging
import PostgresClient
import RPCRuntime
import ServiceKit
import ServiceKitDatabase
import StrictJSON

/// What the admin commands that talk to Apple share (`reconcile`,
/// `recover-notifications`, `request-test-notification`, `lookup-order`):
/// the service's own settings (same variables: the JWS verifier, the
/// Sandbox policy, the App Store Server API key, which these commands
/// require), and for the commands that record Apple's words, the payments
/// database and PointsService, through the same `PaymentProcessor` as the
/// service. Each prints one JSON document on stdout; logs go to stderr.
/// Exit status: 0 done, 1 not done (said in the output), 2 usage or settings.
final class AdminCommand: @unchecked Sendable {
    let options: CommandLineOptions
    let logger: Logger
    let verifier: SignedDataVerifier
    let client: AppStoreServerAPIClient
    /// Set when the command records (`ledger: true`).
    let processor: PaymentProcessor?
    private let pool: PostgresPool?
    private let pointsClient: RPCClient?

    /// The settings every such command reads, plus its own `flags`.
    static func optionSpecs(_ flags: [OptionSpec], ledger: Bool) -> [OptionSpec] {
        var specs = flags
        if ledger {
            specs +=
                [
                    StandardOptions.databaseURL, StandardOptions.pointsAddresses,
                    OptionSpec(
                        flag: nil, env: "DATABASE_MAX_CONNECTIONS", default: "2",
                        help: "Connections this command may open."),
                    StandardOptions.internalAuth, StandardOptions.tlsCertificate, StandardOptions.tlsKey,
                ] + PointsConnection.optionSpecs
                + PaymentsSettings.backoffSpecs
        }
        return specs + [StandardOptions.logLevel] + AppleVerificationSettings.optionSpecs + [
            AppleVerificationSettings.sandboxUserIdsSpec
        ]
            + AppStoreAPISettings.optionSpecs
    }

    /// Everything the command's settings say, read and checked before
    /// anything connects.
    private struct Settings {
        var logLevel: LogLevel
        var verifier: SignedDataVerifier
        var creditPolicy: SandboxCreditPolicy
        var appStoreAPI: AppStoreServerAPIConfiguration
        /// With `ledger: true`.
        var database: ServiceDatabase.Settings?
        var points: PointsConnection.Settings?
        /// With `ledger: true`: the saga's lease and retry timing, as the service's.
        var backoff: RetryBackoff?
    }

    /// Reads every setting the command needs, reporting each problem to
    /// `collector` (all of them, not the first).
    private static func readSettings(_ collector: inout SettingsCollector, ledger: Bool) -> Settings? {
        let logLevel = collector.logLevel()
        let verifier = AppleVerificationSettings.verifier(&collector)
        let sandboxText = collector.value("APPLE_SANDBOX_USER_IDS") ?? ""
        let sandboxUserIds = collector.read { () throws(SettingProblem) in
            try AppleVerificationSettings.sandboxUserIds(sandboxText)
        }
        var appStoreAPI: AppStoreServerAPIConfiguration?
        switch AppStoreAPISettings.read(&collector) {
        case .some(.some(let configuration)): appStoreAPI = configuration
        case .some(.none):
            for setting in AppStoreAPISettings.keySettings {
                collector.report(
                    .missing(
                        setting,
                        because:
                            "this command calls the App Store Server API, which needs the key, its id and the issuer id"
                    ))
            }
        case .none: break
        }
        var database: ServiceDatabase.Settings?
        var points: PointsConnection.Settings?
        var backoff: RetryBackoff?
        if ledger {
            database = ServiceDatabase.Settings.read(&collector)
            points = PointsConnection.read(&collector)
            backoff = PaymentsSettings.readBackoff(&collector)
        }
        guard let logLevel, let verifier, let sandboxUserIds, let appStoreAPI,
            !ledger || (database != nil && points != nil && backoff != nil), collector.problems.isEmpty
        else { return nil }
        return Settings(
            logLevel: logLevel, verifier: verifier,
            creditPolicy: SandboxCreditPolicy(configuration: verifier.configuration, sandboxUserIds: sandboxUserIds),
            appStoreAPI: appStoreAPI, database: database, points: points, backoff: backoff)
    }

    private init(options: CommandLineOptions, name: String, settings: Settings) throws {
        self.options = options
        logger = Logger(service: "payments-\(name)", minimumLevel: settings.logLevel)
        verifier = settings.verifier
        var configuration = settings.appStoreAPI
        let logger = self.logger
        configuration.eventSink = { event in AppStoreAPISettings.log(event, logger) }
        client = try AppStoreServerAPIClient(configuration: configuration)
        if let database = settings.database, let pointsSettings = settings.points, let backoff = settings.backoff {
            let pool = ServiceDatabase.pool(database, applicationName: "payments-\(name)", logger: logger)
            // PointsService as the service itself calls it (mutual TLS with this service's certificate).
            let pointsClient = try PointsConnection.client(pointsSettings)
            let points = PointsLedger(client: pointsClient, backoff: backoff)
            processor = PaymentProcessor(
                store: PaymentsStore(pool: pool, backoff: backoff), verifier: verifier, points: points,
                catalog: CatalogCache(points: points),
                logger: logger, creditPolicy: settings.creditPolicy)
            self.pool = pool
            self.pointsClient = pointsClient
        } else {
            processor = nil
            pool = nil
            pointsClient = nil
        }
    }

    private func close() async {
        await client.close()
        await pointsClient?.close()
        await pool?.close()
    }

    /// Parses `arguments`, answers `--help`, reads and checks every setting
    /// and flag (`validate` reports the command's own flags' problems),
    /// refusing them all at once as sentences with exit 2 before anything
    /// connects, then builds the context and runs `body`, which prints its
    /// result and returns the exit status.
    static func run(
        _ name: String, summary: String, flags: [OptionSpec], ledger: Bool, arguments: [String],
        validate: (inout SettingsCollector) -> Void = { _ in },
        body: (AdminCommand) async -> Int32
    ) async -> Int32 {
        let options: CommandLineOptions
        do {
            options = try CommandLineOptions(
                specs: optionSpecs(flags, ledger: ledger), arguments: arguments,
                environment: ProcessInfo.processInfo.environment)
        } catch {
            printError(name, "\(error)")
            return 2
        }
        if options.helpRequested {
            print(options.helpText(program: "PaymentsService \(name)", summary: summary))
            return 0
        }
        var collector = SettingsCollector(options)
        if let extra = options.positional.first {
            collector.report(
                SettingProblem(
                    extra, "is not an argument of \(name)", because: "its settings are flags and variables (see --help)"
                ))
        }
        validate(&collector)
        let settings = readSettings(&collector, ledger: ledger)
        do {
            try collector.finish()
        } catch {
            FileHandle.standardError.write(Data(error.report(program: "PaymentsService \(name)").utf8))
            return 2
        }
        guard let settings else { preconditionFailure("an unread setting is a reported problem") }
        let command: AdminCommand
        do {
            command = try AdminCommand(options: options, name: name, settings: settings)
        } catch {
            printError(name, "\(error)")
            return 2
        }
        let status = await body(command)
        await command.close()
        return status
    }

    /// A field rule's refusal of a flag, as a sentence naming the flag.
    static func problem(_ error: FieldRuleError, because reason: String) -> SettingProblem {
        SettingProblem(
            error.field,
            error.code == .missing ? "must be set" : "must match \(error.rule) (at most \(error.bytesMax) bytes)",
            because: reason)
    }

    static func printError(_ name: String, _ message: String) {
        FileHandle.standardError.write(Data("PaymentsService \(name): \(message)\n".utf8))
    }

    /// Prints `value` as one JSON line on stdout.
    static func output(_ value: JSONValue) {
        print(JSONWriter.string(of: value))
    }
}
