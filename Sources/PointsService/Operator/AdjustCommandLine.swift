import Foundation
import Logging
import PostgresClient
import ServiceKit
import StrictJSON
import UUIDText

/// `PointsService adjust --user-id UUID --amount N --reason TEXT --operator NAME [--event-id ID]`:
/// an operator's audited correction of one balance, written straight to the
/// service's database (`DATABASE_URL`) as one `adjust` ledger row.
///
/// Exit status: 0 applied or replayed (one JSON line on stdout says which),
/// 1 refused or failed (nothing written; the reason on stderr), 2 usage
/// error (the message names the flag).
enum AdjustCommandLine {
    static let program = "PointsService adjust"
    static let summary = """
        one audited balance adjustment by an operator: an `adjust` ledger row (biz_type support) and the balance, \
        in one transaction; running the same command again changes nothing
        """

    static let specs: [OptionSpec] = [
        OptionSpec(flag: "--user-id", env: nil, help: "The user whose balance to adjust (UUID)."),
        OptionSpec(
            flag: "--amount", env: nil,
            help:
                "Credits to add (N > 0) or take away (N < 0); never 0. A negative N larger than the balance is refused."
        ),
        OptionSpec(
            flag: "--reason", env: nil,
            help: "Why, for the audit trail (printable text, at most \(PointsLimits.adjustReasonBytesMax) bytes)."),
        OptionSpec(
            flag: "--operator", env: nil,
            help: "Who is adjusting (printable text, at most \(PointsLimits.operatorNameBytesMax) bytes)."),
        OptionSpec(
            flag: "--event-id", env: nil,
            help: """
                Idempotency key ([A-Za-z0-9._:-], at most \(PointsLimits.eventIdBytesMax) bytes). Default: "adjust:" + a hash of \
                user id, amount, reason and operator, so re-running the same command is a replay; pass one to apply the same \
                adjustment twice on purpose. Never in a payment movement's namespace \
                (\(PointsValidation.quoted(PointsValidation.paymentNamespaces))).
                """),
        StandardOptions.databaseURL,
    ]

    /// What one run ends with: the exit status and what to print.
    struct Outcome: Equatable, Sendable {
        var status: Int32
        var standardOutput: String = ""
        var standardError: String = ""
    }

    static let refusedStatus: Int32 = 1
    static let usageStatus: Int32 = 2

    /// The flag that carries each field AdjustCommand validates.
    static let flagOfField = [
        "user_id": "--user-id", "amount": "--amount", "reason": "--reason", "operator": "--operator",
        "event_id": "--event-id",
    ]

    /// Runs `adjust` with the words after it: parse, then apply.
    static func run(arguments: [String], environment: [String: String]) async -> Outcome {
        let parsed: (adjustment: ValidatedAdjustment, databaseURL: String)?
        do {
            parsed = try parse(arguments: arguments, environment: environment)
        } catch {
            // One sentence per problem, each on its own line.
            let lines = error.description.split(separator: "\n").map { "\(program): \($0)\n" }
            return Outcome(status: usageStatus, standardError: lines.joined())
        }
        guard let parsed else {
            let help = try? CommandLineOptions(specs: specs, arguments: [], environment: [:]).helpText(
                program: program, summary: summary)
            return Outcome(status: 0, standardOutput: (help ?? summary) + "\n")
        }
        return await apply(parsed.adjustment, databaseURL: parsed.databaseURL)
    }

    /// The validated adjustment and the database to write it to, or nil when
    /// `--help` was asked for. Every problem of every flag and variable is
    /// reported at once, one sentence per line naming the flag to fix.
    static func parse(arguments: [String], environment: [String: String]) throws(CommandLineError)
        -> (adjustment: ValidatedAdjustment, databaseURL: String)?
    {
        let options: CommandLineOptions
        do {
            options = try CommandLineOptions(specs: specs, arguments: arguments, environment: environment)
        } catch let error as CommandLineError {
            throw error
        } catch {
            throw CommandLineError("\(error)")
        }
        if options.helpRequested { return nil }
        var settings = SettingsCollector(options)
        if let extra = options.positional.first {
            settings.report(
                SettingProblem(
                    extra, "is not an argument of adjust", because: "every value is given with its flag (see --help)"))
        }
        let userId = settings.required("--user-id", because: "it is the user whose balance is adjusted")
        var amount: Int64?
        let amountReason = "it is the signed number of credits to add or take away"
        if let text = settings.required("--amount", because: amountReason) {
            if let parsed = Int64(text), parsed != 0,
                (-PointsLimits.balanceMax...PointsLimits.balanceMax).contains(parsed)
            {
                amount = parsed
            } else {
                settings.report(
                    SettingProblem(
                        "--amount",
                        "must be a non-zero whole number in -\(PointsLimits.balanceMax)..."
                            + "\(PointsLimits.balanceMax), e.g. 100 or -50", because: amountReason))
            }
        }
        let reason = settings.required("--reason", because: "the ledger row keeps why, for the audit trail")
        let operatorName = settings.required("--operator", because: "the ledger row keeps who, for the audit trail")
        let eventId = settings.value("--event-id") ?? ""
        let databaseURL = settings.required(
            "DATABASE_URL", because: "the adjustment is written to PointsService's own database")
        // Each field's own rule, every one checked (not only the first to fail).
        if let userId {
            do throws(PointsError) { _ = try PointsValidation.userId(userId) } catch { settings.report(problem(error)) }
        }
        if let reason {
            do throws(PointsError) {
                _ = try PointsValidation.text(
                    reason, field: "reason", maxBytes: PointsLimits.adjustReasonBytesMax, required: true)
            } catch { settings.report(problem(error)) }
        }
        if let operatorName {
            do throws(PointsError) {
                _ = try PointsValidation.text(
                    operatorName, field: "operator", maxBytes: PointsLimits.operatorNameBytesMax, required: true)
            } catch { settings.report(problem(error)) }
        }
        if !eventId.isEmpty {
            do throws(PointsError) { _ = try PointsValidation.adjustmentEventId(eventId) } catch {
                settings.report(problem(error))
            }
        }
        do {
            try settings.finish()
        } catch {
            throw CommandLineError(error.description)
        }
        guard let userId, let amount, let reason, let operatorName, let databaseURL else {
            preconditionFailure("an unread setting is a reported problem")
        }
        let command = AdjustCommand(
            userId: userId, amount: amount, reason: reason, operatorName: operatorName, eventId: eventId)
        do {
            return (try command.validated(), databaseURL)
        } catch {
            throw CommandLineError(problem(error).description)
        }
    }

    /// A field's refusal as a sentence naming its flag.
    private static func problem(_ error: PointsError) -> SettingProblem {
        guard case .validationFailed(let field, let problem) = error else {
            return SettingProblem(
                "adjust", "was refused (\(error.description))",
                because: "the adjustment is checked before anything is written")
        }
        return SettingProblem(
            flagOfField[field] ?? field, problem, because: "the adjustment is checked before anything is written")
    }

    /// Migrates (as the service does at start-up), then writes the
    /// adjustment; its audit line goes to `auditLog` (stderr by default).
    static func apply(
        _ adjustment: ValidatedAdjustment, databaseURL: String,
        auditLog: AuditLog = AuditLog(Logger(service: "points-adjust"))
    ) async -> Outcome {
        let pool = PostgresPool(
            configuration: .init(connectionString: databaseURL, connectionsMax: 1, applicationName: "points-adjust"))
        let store = PointsStore(pool: pool, catalog: .none)
        let audit = LedgerAudit(log: auditLog)
        let outcome: Outcome
        do {
            try await store.migrate()
            let result = try await audit.audited(
                .adjustment, eventId: adjustment.eventId, userId: adjustment.userId.uuidString, requestId: nil
            ) {
                try await store.adjust(adjustment)
            } figures: {
                LedgerAudit.Figures(credits: $0.amount, balanceAfter: $0.balanceAfter, replayed: $0.replayed)
            }
            outcome = Outcome(status: 0, standardOutput: resultLine(result) + "\n")
        } catch {
            outcome = Outcome(
                status: refusedStatus, standardError: "\(program): refused, nothing was written: \(error)\n")
        }
        await pool.close()
        return outcome
    }

    /// The one JSON line printed on success.
    static func resultLine(_ result: AdjustResult) -> String {
        // Keys in sorted order, as the tool has always printed them.
        JSONWriter.string(
            of: .object(
                JSONObject([
                    "amount": .integer(result.amount),
                    "balance_after": .integer(result.balanceAfter),
                    "balance_before": .integer(result.balanceBefore),
                    "event_id": .string(result.eventId),
                    "ledger_entry_id": .string(UUIDText.lowercased(result.ledgerEntryId)),
                    "replayed": .bool(result.replayed),
                    "user_id": .string(UUIDText.lowercased(result.userId)),
                ])))
    }
}
