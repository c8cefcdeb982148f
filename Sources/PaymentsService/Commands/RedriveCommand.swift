import FieldRules
import Foundation
import Logging
import PostgresClient
import RPCRuntime
import ServiceKit
import ServiceKitDatabase
import StrictJSON

/// `PaymentsService redrive --transaction-id ID`: the way out of a stuck or
/// failed purchase once its cause is fixed (a catalog entry restored, a
/// claim corrected, PointsService back). A refused grant is owed again, the
/// owed step is due now, and this command runs it at once through the same
/// runner as the service (or waits, bounded, for the running instance
/// whose worker took it first). Idempotent: a settled transaction is left as it is. Prints
/// one JSON line with the row before and after; exit 0 when nothing is left
/// owed, 1 when a step is still owed or the transaction is unknown, 2 on
/// usage errors.
enum RedriveCommand {
    static let optionSpecs: [OptionSpec] =
        [
            OptionSpec(flag: "--transaction-id", env: nil, help: "The Apple transactionId to re-drive."),
            StandardOptions.databaseURL, StandardOptions.pointsAddresses,
            OptionSpec(
                flag: nil, env: "DATABASE_MAX_CONNECTIONS", default: "2", help: "Connections this command may open."),
            StandardOptions.logLevel, StandardOptions.internalAuth, StandardOptions.tlsCertificate,
            StandardOptions.tlsKey,
        ] + PointsConnection.optionSpecs + PaymentsSettings.backoffSpecs

    static func run(arguments: [String]) async -> Int32 {
        let options: CommandLineOptions
        do {
            options = try CommandLineOptions(
                specs: optionSpecs, arguments: arguments, environment: ProcessInfo.processInfo.environment)
        } catch {
            printError("\(error)")
            return 2
        }
        if options.helpRequested {
            print(
                options.helpText(
                    program: "PaymentsService redrive",
                    summary: "re-run a failed or stuck purchase saga after its cause is fixed"))
            return 0
        }
        // Every problem at once, before anything connects.
        var settings = SettingsCollector(options)
        if let extra = options.positional.first {
            settings.report(
                SettingProblem(
                    extra, "is not an argument of redrive", because: "its settings are flags and variables (see --help)"
                ))
        }
        var transactionId: String?
        do throws(FieldRuleError) {
            transactionId = try TransactionIDRule.validated(
                options.value("--transaction-id") ?? "", field: "--transaction-id")
        } catch {
            settings.report(AdminCommand.problem(error, because: "it is the Apple transactionId whose saga is re-run"))
        }
        let logLevel = settings.logLevel()
        let database = ServiceDatabase.Settings.read(&settings)
        let points = PointsConnection.read(&settings)
        let backoff = PaymentsSettings.readBackoff(&settings)
        do {
            try settings.finish()
        } catch {
            FileHandle.standardError.write(Data(error.report(program: "PaymentsService redrive").utf8))
            return 2
        }
        guard let transactionId, let logLevel, let database, let points, let backoff else {
            preconditionFailure("an unread setting is a reported problem")
        }
        let logger = Logger(service: "payments-redrive", minimumLevel: logLevel)
        let pool = ServiceDatabase.pool(database, applicationName: "payments-redrive", logger: logger)
        let client: RPCClient
        do {
            client = try PointsConnection.client(points)
        } catch {
            printError("\(error)")
            await pool.close()
            return 2
        }
        let store = PaymentsStore(pool: pool, backoff: backoff)
        let runner = LedgerStepRunner(
            store: store, points: PointsLedger(client: client, backoff: backoff), logger: logger)
        var status: Int32 = 1
        do {
            let result = try await redrive(transactionId: transactionId, store: store, runner: runner)
            print(JSONWriter.string(of: result.report))
            status = result.settled ? 0 : 1
        } catch .transactionNotFound {
            printError("no transaction \(transactionId) in this database")
        } catch {
            printError("\(error)")
        }
        await client.close()
        await pool.close()
        return status
    }

    /// What a redrive did: the report it prints, and whether anything is still owed.
    struct Result {
        var report: JSONValue
        var settled: Bool
    }

    static func redrive(transactionId: String, store: PaymentsStore, runner: LedgerStepRunner)
        async throws(PaymentsError) -> Result
    {
        let (before, redriven) = try await store.redrive(transactionId: transactionId)
        var after = redriven
        var note = "nothing owed"
        if redriven.pendingStep != nil {
            if let leased = try await store.claim(transactionId: transactionId) {
                let run = await runner.runOwedSteps(leased, requestId: "redrive-\(transactionId)")
                after = run.record
                note = run.failure.map { "still owed: \($0.detail)" } ?? "ran the owed steps"
            } else {
                // A running instance's worker took it first (the step was due at
                // once): wait, bounded, for its result so the report shows it.
                after = try await settled(transactionId, store: store) ?? redriven
                note =
                    after.pendingStep == nil
                    ? "a running instance's worker ran the owed step"
                    : "another instance holds the lease; its worker runs the owed step"
            }
        }
        var object = JSONObject()
        object.insert("transaction_id", .string(transactionId))
        object.insert("before", summary(before))
        object.insert("after", summary(after))
        object.insert("note", .string(note))
        return Result(report: .object(object), settled: after.pendingStep == nil)
    }

    /// How long `redrive` waits for another instance's worker to finish the step.
    static let otherRunnerWaitMax: Duration = .seconds(15)

    /// The row once nothing is owed, or as it stands after `otherRunnerWaitMax`.
    private static func settled(_ transactionId: String, store: PaymentsStore) async throws(PaymentsError)
        -> PaymentRecord?
    {
        let deadline = ContinuousClock.now + otherRunnerWaitMax
        var current = try await store.find(transactionId: transactionId)
        while current?.pendingStep != nil && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(100))
            current = try await store.find(transactionId: transactionId)
        }
        return current
    }

    static func summary(_ record: PaymentRecord) -> JSONValue {
        var object = JSONObject()
        object.insert("status", .string(record.status.rawValue))
        object.insert("pending", record.pendingStep.map { .string("\($0)") } ?? .null)
        object.insert("credits", .integer(record.state.credits))
        object.insert("credits_held", .integer(record.state.creditsHeld))
        object.insert("last_error", record.lastError.map(JSONValue.string) ?? .null)
        return .object(object)
    }

    private static func printError(_ message: String) {
        FileHandle.standardError.write(Data("PaymentsService redrive: \(message)\n".utf8))
    }
}
