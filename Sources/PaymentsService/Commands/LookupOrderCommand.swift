import AppStoreServerAPI
import AppStoreVerification
import Foundation
import ServiceKit
import StrictJSON

/// `PaymentsService lookup-order --order-id ID`: what Apple knows of the
/// order id on a customer's App Store receipt (Look Up Order ID, production
/// only at Apple), each transaction verified with the service's
/// `SignedDataVerifier` and printed field by field (never the JWS). For
/// support: "I paid and got nothing" starts here, then `reconcile`. Exit 0
/// for a valid order id, 1 for one Apple does not know, 2 on a usage or
/// settings error.
enum LookupOrderCommand {
    static let flags = [
        OptionSpec(flag: "--order-id", env: nil, help: "The order id from the customer's App Store receipt email.")
    ]
    static let orderIdBytesMax = 64

    static func run(arguments: [String]) async -> Int32 {
        await AdminCommand.run(
            "lookup-order", summary: "print Apple's verified transactions of a customer's order id (Look Up Order ID)",
            flags: flags, ledger: false, arguments: arguments,
            validate: { settings in
                let orderId = settings.value("--order-id") ?? ""
                guard !orderId.isEmpty, orderId.utf8.count <= orderIdBytesMax,
                    orderId.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
                else {
                    return settings.report(
                        SettingProblem(
                            "--order-id", "must be 1 to \(orderIdBytesMax) letters and digits",
                            because: "it is the order id of the customer's App Store receipt email"))
                }
            },
            body: { command in await lookup(command) })
    }

    private static func lookup(_ command: AdminCommand) async -> Int32 {
        let orderId = command.options.value("--order-id") ?? ""
        guard command.verifier.configuration.allowedEnvironments.contains(.production) else {
            AdminCommand.printError(
                "lookup-order",
                "Apple offers Look Up Order ID in production only, and APPLE_ENVIRONMENTS does not accept Production")
            return 2
        }
        let answer: OrderLookupResponse
        do {
            answer = try await command.client.lookUpOrderId(orderId, environment: .production)
        } catch {
            AdminCommand.printError("lookup-order", "Look Up Order ID failed: \(error)")
            return 1
        }
        var report = JSONObject()
        report.insert("order_id", .string(orderId))
        report.insert("valid", .bool(answer.isValid))
        var transactions: [JSONValue] = []
        for signed in answer.signedTransactions {
            do {
                transactions.append(summary(try await command.verifier.verifyTransaction(signed)))
            } catch {
                var refused = JSONObject()
                refused.insert("verification", .string("refused: \(error.code)"))
                transactions.append(.object(refused))
            }
        }
        report.insert("transactions", .array(transactions))
        AdminCommand.output(.object(report))
        return answer.isValid ? 0 : 1
    }

    static func summary(_ transaction: JWSTransaction) -> JSONValue {
        var object = JSONObject()
        object.insert("transaction_id", transaction.transactionId.map(JSONValue.string) ?? .null)
        object.insert("original_transaction_id", transaction.originalTransactionId.map(JSONValue.string) ?? .null)
        object.insert("product_id", transaction.productId.map(JSONValue.string) ?? .null)
        object.insert("type", transaction.type.map { .string($0.rawValue) } ?? .null)
        object.insert("quantity", .integer(Int64(transaction.quantity ?? 1)))
        object.insert("purchase_date_ms", transaction.purchaseDate.map { .integer($0.millisecondsSince1970) } ?? .null)
        object.insert("environment", transaction.environment.map { .string($0.rawValue) } ?? .null)
        object.insert(
            "app_account_token", transaction.appAccountToken.map { .string($0.uuidString.lowercased()) } ?? .null)
        object.insert(
            "revocation_date_ms", transaction.revocationDate.map { .integer($0.millisecondsSince1970) } ?? .null)
        object.insert("revocation_type", transaction.revocationType.map { .string($0.rawValue) } ?? .null)
        object.insert("price_milliunits", transaction.price.map(JSONValue.integer) ?? .null)
        object.insert("currency", transaction.currency.map(JSONValue.string) ?? .null)
        return .object(object)
    }
}
