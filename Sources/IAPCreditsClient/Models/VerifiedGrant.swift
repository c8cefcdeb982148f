/// The 200 answer of POST /api/v1/payments/apple/transactions/verify: the
/// transaction is credited, by this call (`granted`) or before it
/// (`already_granted`, nothing added). Both mean: finish the StoreKit
/// transaction now.
public struct VerifiedGrant: Sendable, Hashable, Codable {
    public enum Status: String, Sendable, Hashable, Codable {
        case granted
        case alreadyGranted = "already_granted"
    }

    public let status: Status
    public let productCode: String
    public let transactionId: String
    public let creditsAdded: Int64
    public let newBalance: Int64
    public let ledgerEventId: String

    public init(
        status: Status, productCode: String, transactionId: String, creditsAdded: Int64, newBalance: Int64,
        ledgerEventId: String
    ) {
        self.status = status
        self.productCode = productCode
        self.transactionId = transactionId
        self.creditsAdded = creditsAdded
        self.newBalance = newBalance
        self.ledgerEventId = ledgerEventId
    }

    /// The invariants a credit answer must hold; an answer breaking them is
    /// not trusted (the transaction stays unfinished and is resubmitted).
    func isConsistent(forTransactionId expected: String) -> Bool {
        transactionId == expected && creditsAdded >= 0 && newBalance >= 0
            && (status == .granted || creditsAdded == 0)
    }
}
