import HTTPServer
import StrictJSON
import UTCTime

/// GET /api/v1/payments/apple/transactions/{transactionId}: where one of the
/// user's purchases stands (docs/protocols/payments/apple-iap-protocol.md,
/// 3.3), for recovery after a lost response.
/// Internal fields (failure codes, overdue amounts, record ids) stay inside.
public struct TransactionStatusResponseBody: JSONResponseBody, Equatable {
    /// apple_iap_transactions.status values (apple-iap-protocol.md, 3.3).
    public enum Status: String, Sendable, CaseIterable {
        case received
        case verified
        case granted
        case failed
        case refunded
        case refundedInsufficient = "refunded_insufficient"
        case revoked
    }

    public let transactionId: String
    public let originalTransactionId: String
    public let productCode: String
    public let appStoreProductId: String
    /// "Production" or "Sandbox".
    public let environment: String
    public let status: Status
    public let credits: Int64
    public let purchaseDateUnixMilliseconds: Int64
    /// Nil when not revoked.
    public let revocationDateUnixMilliseconds: Int64?
    /// Nil until granted.
    public let ledgerEventId: String?

    public init(
        transactionId: String, originalTransactionId: String, productCode: String, appStoreProductId: String,
        environment: String, status: Status, credits: Int64, purchaseDateUnixMilliseconds: Int64,
        revocationDateUnixMilliseconds: Int64?, ledgerEventId: String?
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productCode = productCode
        self.appStoreProductId = appStoreProductId
        self.environment = environment
        self.status = status
        self.credits = credits
        self.purchaseDateUnixMilliseconds = purchaseDateUnixMilliseconds
        self.revocationDateUnixMilliseconds = revocationDateUnixMilliseconds
        self.ledgerEventId = ledgerEventId
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.insert("transactionId", .string(transactionId))
        object.insert("originalTransactionId", .string(originalTransactionId))
        object.insert("productCode", .string(productCode))
        object.insert("appStoreProductId", .string(appStoreProductId))
        object.insert("environment", .string(environment))
        object.insert("status", .string(status.rawValue))
        object.insert("credits", .integer(credits))
        object.insert("purchaseDate", .string(UTCDateTime(unixMilliseconds: purchaseDateUnixMilliseconds).rfc3339))
        object.insertIfPresent(
            "revocationDate", revocationDateUnixMilliseconds.map { .string(UTCDateTime(unixMilliseconds: $0).rfc3339) })
        object.insertIfPresent("ledgerEventId", ledgerEventId.map(JSONValue.string))
        return .object(object)
    }
}
