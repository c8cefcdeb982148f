import Foundation

/// Where one of the user's purchases stands on the backend
/// (GET /api/v1/payments/apple/transactions/{transactionId}).
public struct TransactionStatus: Sendable, Hashable, Codable {
    /// apple_iap_transactions.status (docs/protocols/payments/apple-iap-protocol.md 3.3); a value added later decodes as `unrecognized`.
    public enum Status: Sendable, Hashable, Codable {
        case received, verified, granted, failed, refunded, refundedInsufficient, revoked
        case unrecognized(String)

        static let wireValues: [(Status, String)] = [
            (.received, "received"), (.verified, "verified"), (.granted, "granted"), (.failed, "failed"),
            (.refunded, "refunded"), (.refundedInsufficient, "refunded_insufficient"), (.revoked, "revoked"),
        ]

        public init(from decoder: any Decoder) throws {
            let text = try decoder.singleValueContainer().decode(String.self)
            self = Self.wireValues.first { $0.1 == text }?.0 ?? .unrecognized(text)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(wireValue)
        }

        public var wireValue: String {
            if case .unrecognized(let text) = self { return text }
            return Self.wireValues.first { $0.0 == self }?.1 ?? ""
        }
    }

    public let transactionId: String
    public let originalTransactionId: String
    public let productCode: String
    public let appStoreProductId: String
    /// Production, Sandbox, Xcode or LocalTesting.
    public let environment: String
    public let status: Status
    public let credits: Int64
    /// RFC 3339 UTC with milliseconds, as the gateway writes it.
    public let purchaseDate: String
    public let revocationDate: String?
    public let ledgerEventId: String?

    public init(
        transactionId: String, originalTransactionId: String, productCode: String, appStoreProductId: String,
        environment: String,
        status: Status, credits: Int64, purchaseDate: String, revocationDate: String?, ledgerEventId: String?
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productCode = productCode
        self.appStoreProductId = appStoreProductId
        self.environment = environment
        self.status = status
        self.credits = credits
        self.purchaseDate = purchaseDate
        self.revocationDate = revocationDate
        self.ledgerEventId = ledgerEventId
    }
}
