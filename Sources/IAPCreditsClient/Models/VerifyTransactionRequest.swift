import Foundation

/// The body of POST /api/v1/payments/apple/transactions/verify. It carries
/// the signed transaction, so it is never logged; `description` leaves it out.
public struct VerifyTransactionRequest: Sendable, Hashable, Encodable, CustomStringConvertible,
    CustomDebugStringConvertible, CustomReflectable
{
    public let productCode: String
    public let appStoreProductId: String
    public let transactionId: String
    /// StoreKit 2's `jwsRepresentation`.
    public let signedTransactionInfo: String
    public let appAccountToken: UUID?

    public init(
        productCode: String, appStoreProductId: String, transactionId: String, signedTransactionInfo: String,
        appAccountToken: UUID?
    ) {
        self.productCode = productCode
        self.appStoreProductId = appStoreProductId
        self.transactionId = transactionId
        self.signedTransactionInfo = signedTransactionInfo
        self.appAccountToken = appAccountToken
    }

    private enum CodingKeys: String, CodingKey {
        case productCode, appStoreProductId, transactionId, signedTransactionInfo, appAccountToken
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(productCode, forKey: .productCode)
        try container.encode(appStoreProductId, forKey: .appStoreProductId)
        try container.encode(transactionId, forKey: .transactionId)
        try container.encode(signedTransactionInfo, forKey: .signedTransactionInfo)
        // Lower case, as the gateway issues it.
        try container.encodeIfPresent(appAccountToken.map { $0.uuidString.lowercased() }, forKey: .appAccountToken)
    }

    public var description: String {
        "VerifyTransactionRequest(transactionId: \(transactionId), productCode: \(productCode), signedTransactionInfo: <redacted>)"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["transactionId": transactionId, "productCode": productCode], displayStyle: .struct)
    }
}
