import StrictJSON

/// The 200 answer of the verify route, exactly the two shapes of
/// docs/protocols/payments/apple-iap-protocol.md (3.2):
/// `granted` (credited by this call) and `already_granted` (credited before;
/// creditsAdded is 0). Both tell the app to finish the StoreKit transaction.
public struct VerifyTransactionResponseBody: JSONResponseBody, Equatable {
    /// The outcome names on the wire.
    public enum Status: String, Sendable {
        case granted
        case alreadyGranted = "already_granted"
    }

    public let status: Status
    public let productCode: String
    public let transactionId: String
    public let creditsAdded: Int64
    public let newBalance: Int64
    public let ledgerEventId: String

    /// Checks the invariants a backend answer must hold: no negative
    /// credits, and `already_granted` adds nothing.
    public init(
        status: Status, productCode: String, transactionId: String, creditsAdded: Int64, newBalance: Int64,
        ledgerEventId: String
    ) throws(ResponseInvariantViolation) {
        guard creditsAdded >= 0, newBalance >= 0 else {
            throw ResponseInvariantViolation("negative credits in a grant")
        }
        guard status == .granted || creditsAdded == 0 else {
            throw ResponseInvariantViolation("already_granted with credits added")
        }
        self.status = status
        self.productCode = productCode
        self.transactionId = transactionId
        self.creditsAdded = creditsAdded
        self.newBalance = newBalance
        self.ledgerEventId = ledgerEventId
    }

    public var json: JSONValue {
        .object(
            JSONObject([
                "status": .string(status.rawValue),
                "productCode": .string(productCode),
                "transactionId": .string(transactionId),
                "creditsAdded": .integer(creditsAdded),
                "newBalance": .integer(newBalance),
                "ledgerEventId": .string(ledgerEventId),
            ]))
    }
}
