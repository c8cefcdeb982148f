/// The body of POST /api/v1/payments/apple/transactions/verify
/// (docs/protocols/payments/apple-iap-protocol.md, 3.2).
/// Credits, prices and the user never come from here: only what identifies
/// the purchase, which PaymentsService checks against Apple's signature.
public struct VerifyTransactionRequestBody: Sendable, Equatable {
    public static let fieldNames: Set<String> = [
        "productCode", "appStoreProductId", "transactionId", "signedTransactionInfo", "appAccountToken",
    ]

    public let productCode: String
    public let appStoreProductId: String
    public let transactionId: String
    /// The StoreKit 2 JWS; never log it.
    public let signedTransactionInfo: String
    /// Lower-cased UUID, or nil when the app sent none.
    public let appAccountToken: String?

    /// Strictly decodes and validates a request body.
    public init(jsonBody: [UInt8]) throws(ValidationError) {
        let body = try JSONRequestBody(jsonBody)
        try body.rejectUnknownFields(allowed: Self.fieldNames)
        productCode = try RequestFieldRules.productCode(body.requiredString("productCode"))
        appStoreProductId = try RequestFieldRules.appStoreProductId(body.requiredString("appStoreProductId"))
        transactionId = try RequestFieldRules.transactionId(body.requiredString("transactionId"))
        signedTransactionInfo = try RequestFieldRules.compactJWS(
            body.requiredString("signedTransactionInfo"), field: "signedTransactionInfo")
        appAccountToken = try body.optionalString("appAccountToken").map { (text) throws(ValidationError) in
            try RequestFieldRules.uuid(text, field: "appAccountToken")
        }
    }
}
