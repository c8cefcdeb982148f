import AppStoreServerAPI
import AppStoreVerification
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
            specs += [StandardOptions.databaseURL, StandardOptions.pointsAddresses,
                      OptionSpec(flag: nil, env: "DATABASE_MAX_CONNECTIONS", default: "2", help: "Connections this command may open."),
                      StandardOptions.internalAuth, StandardOptions.tlsCertificate, StandardOptions.tlsKey] + PointsConnection.optionSpecs
        }
        return specs + [StandardOptions.logLevel] + AppleVerificationSettings.optionSpecs + [AppleVerificationSettings.sandboxUserIdsSpec]
            + AppStoreAPISettings.optionSpecs
    }

    private init(options: CommandLineOptions, name: String, ledger: Bool) throws {
        self.options = options
        logger = Logger(service: "payments-\(name)", minimumLevel: try StandardOptions.logLevel(options.required("--log-level")))
        verifier = try AppleVerificationSettings.verifier(options)
        guard let configuration = try AppStoreAPISettings.configuration(options, logger: logger) else {
            throw CommandLineError("set \(AppStoreAPISettings.keySettings.joined(separator: ", ")): this command calls the App Store Server API")
        }
        client = try AppStoreServerAPIClient(configuration: configuration)
        if ledger {
            let pool = try ServiceDatabase.pool(options, applicationName: "payments-\(name)")
            // PointsService as the service itself calls it (mutual TLS with this service's certificate).
            let pointsClient = try PointsConnection.client(options)
            let points = PointsLedger(client: pointsClient)
            processor = PaymentProcessor(store: PaymentsStore(pool: pool), verifier: verifier, points: points, catalog: CatalogCache(points: points),
                                         logger: logger, creditPolicy: try AppleVerificationSettings.creditPolicy(options, verifier: verifier))
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

    /// Parses `arguments`, answers `--help`, builds the context and runs
    /// `body`, which prints its result and returns the exit status.
    static func run(
        _ name: String, summary: String, flags: [OptionSpec], ledger: Bool, arguments: [String],
        validate: (CommandLineOptions) throws -> Void = { _ in },
        body: (AdminCommand) async -> Int32
    ) async -> Int32 {
        let options: CommandLineOptions
        do {
            options = try CommandLineOptions(specs: optionSpecs(flags, ledger: ledger), arguments: arguments,
                                             environment: ProcessInfo.processInfo.environment)
        } catch {
            printError(name, "\(error)")
            return 2
        }
        if options.helpRequested {
            print(options.helpText(program: "PaymentsService \(name)", summary: summary))
            return 0
        }
        let command: AdminCommand
        do {
            try validate(options)
            command = try AdminCommand(options: options, name: name, ledger: ledger)
        } catch {
            printError(name, "\(error)")
            return 2
        }
        let status = await body(command)
        await command.close()
        return status
    }

    static func printError(_ name: String, _ message: String) {
        FileHandle.standardError.write(Data("PaymentsService \(name): \(message)\n".utf8))
    }

    /// Prints `value` as one JSON line on stdout.
    static func output(_ value: JSONValue) {
        print(JSONWriter.string(of: value))
    }
}
