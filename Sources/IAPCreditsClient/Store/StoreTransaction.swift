import Foundation

/// A StoreKit 2 transaction as the library needs it. It holds the signed
/// transaction (`jwsRepresentation`), so `description`, `debugDescription`
/// and mirrors leave that out.
public struct StoreTransaction: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// StoreKit's `Transaction.id` as decimal text.
    public let id: String
    public let originalID: String
    /// The App Store product id.
    public let productID: String
    /// The appAccountToken the purchase was made with (nil when none was given).
    public let appAccountToken: UUID?
    public let purchaseDate: Date
    /// Set when Apple refunded or revoked the purchase.
    public let revocationDate: Date?
    /// StoreKit's `jwsRepresentation`: what the gateway verifies.
    public let signedTransactionInfo: String

    public init(
        id: String, originalID: String, productID: String, appAccountToken: UUID?, purchaseDate: Date,
        revocationDate: Date?, signedTransactionInfo: String
    ) {
        self.id = id
        self.originalID = originalID
        self.productID = productID
        self.appAccountToken = appAccountToken
        self.purchaseDate = purchaseDate
        self.revocationDate = revocationDate
        self.signedTransactionInfo = signedTransactionInfo
    }

    public var description: String {
        "StoreTransaction(id: \(id), productID: \(productID)\(revocationDate == nil ? "" : ", revoked"), signedTransactionInfo: <redacted>)"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["id": id, "productID": productID], displayStyle: .struct)
    }
}

/// StoreKit's verification of a transaction (`VerificationResult<Transaction>`).
public enum StoreTransactionResult: Sendable, Hashable {
    /// StoreKit verified Apple's signature on this device.
    case verified(StoreTransaction)
    /// StoreKit could not verify it; the reason is StoreKit's, never signed data.
    case unverified(StoreTransaction, reason: String)

    public var transaction: StoreTransaction {
        switch self {
        case .verified(let transaction), .unverified(let transaction, _): transaction
        }
    }
}

/// What a purchase sheet ended with (`Product.PurchaseResult`). A failure
/// before payment is thrown by `StoreFront.purchase` instead.
public enum StorePurchaseOutcome: Sendable, Hashable {
    /// Paid: the transaction to verify and, once credited, finish.
    case success(StoreTransactionResult)
    /// Waiting for approval (Ask to Buy, Strong Customer Authentication):
    /// the transaction arrives later through `transactionUpdates`.
    case pending
    case userCancelled
}
