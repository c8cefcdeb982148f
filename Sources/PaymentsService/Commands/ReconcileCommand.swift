import FieldRules
import Foundation
import ServiceKit
import StrictJSON
import UUIDText

/// `PaymentsService reconcile --transaction-id ID | --user-id UUID`: asks
/// Apple (Get Transaction Info; for a user, each of their transactions and
/// their consumable history) and records what it says through the same
/// model as the service, so a missed grant is granted and a refund Apple
/// granted is clawed back, once. Idempotent. Prints one JSON line: each
/// transaction's result, Apple's environment, the claim decision, the row
/// before and after. Exit 0 when every transaction is known to Apple and
/// owes nothing, 1 otherwise, 2 on a usage or settings error.
enum ReconcileCommand {
    static let flags = [
        OptionSpec(flag: "--transaction-id", env: nil, help: "The Apple transactionId to reconcile with Apple's view."),
        OptionSpec(
            flag: "--user-id", env: nil,
            help: "A user (UUID) whose transactions, and consumable history at Apple, are reconciled."),
    ]

    static func run(arguments: [String]) async -> Int32 {
        await AdminCommand.run(
            "reconcile",
            summary: "record Apple's view of a transaction or a user's transactions, so the ledger agrees with Apple",
            flags: flags, ledger: true, arguments: arguments,
            validate: { settings in
                let transaction = settings.value("--transaction-id"), user = settings.value("--user-id")
                if (transaction == nil) == (user == nil) {
                    settings.report(
                        SettingProblem(
                            "--transaction-id", "or --user-id must be given, not both",
                            because: "reconcile records Apple's view of one transaction or of one user's"))
                }
                if let transaction {
                    do throws(FieldRuleError) {
                        _ = try TransactionIDRule.validated(transaction, field: "--transaction-id")
                    } catch {
                        settings.report(
                            AdminCommand.problem(error, because: "it is the Apple transactionId to ask Apple about"))
                    }
                }
                if let user {
                    do throws(FieldRuleError) { _ = try UUIDRule.uuid(user, field: "--user-id") } catch {
                        settings.report(
                            AdminCommand.problem(error, because: "it is the user whose transactions are reconciled"))
                    }
                }
            },
            body: { command in await reconcile(command) })
    }

    private static func reconcile(_ command: AdminCommand) async -> Int32 {
        guard let processor = command.processor else { return 2 }
        let reconciler = Reconciler(client: command.client, processor: processor, logger: command.logger)
        let outcomes: [Reconciler.Outcome]
        do {
            if let transactionId = command.options.value("--transaction-id") {
                outcomes = [
                    try await reconciler.reconcile(
                        transactionId: transactionId, requestId: "reconcile-\(transactionId)")
                ]
            } else {
                let user = try UUIDRule.uuid(command.options.value("--user-id") ?? "", field: "--user-id")
                outcomes = try await reconciler.reconcile(
                    userId: user, requestId: "reconcile-user-\(UUIDText.lowercased(user))")
            }
        } catch {
            AdminCommand.printError("reconcile", "\(error)")
            return 1
        }
        let settled = outcomes.allSatisfy { $0.result != .notFoundAtApple && $0.isSettled }
        var object = JSONObject()
        object.insert("transactions", .array(outcomes.map(report)))
        object.insert("settled", .bool(settled))
        AdminCommand.output(.object(object))
        return settled ? 0 : 1
    }

    static func report(_ outcome: Reconciler.Outcome) -> JSONValue {
        var object = JSONObject()
        object.insert("transaction_id", .string(outcome.transactionId))
        object.insert("result", .string(outcome.result.rawValue))
        object.insert("environment", outcome.environment.map { .string($0.rawValue) } ?? .null)
        object.insert("claim", outcome.decision.map { .string(Reconciler.claimLabel($0)) } ?? .null)
        object.insert("before", outcome.before.map(RedriveCommand.summary) ?? .null)
        object.insert("after", outcome.after.map(RedriveCommand.summary) ?? .null)
        return .object(object)
    }
}
