/// The body of POST /api/v1/payments/apple/receipts
/// (docs/protocols/payments/apple-iap-protocol.md, 3.7): a StoreKit 1 app
/// receipt and nothing else. Which transactions it holds, their products
/// and their owner are decided by PaymentsService from Apple's answers.
public struct VerifyReceiptRequestBody: Sendable, Equatable {
    public static let fieldNames: Set<String> = ["receiptData"]

    /// Strict padded base64 (PaymentsService reads it); never log it.
    public let receiptData: String

    /// Strictly decodes the body (up to the route's larger body limit) and
    /// checks `receiptData`'s presence, size and alphabet.
    public init(jsonBody: [UInt8]) throws(ValidationError) {
        let body = try JSONRequestBody(jsonBody, bytesMax: GatewayLimits.receiptRequestBodyBytesMax)
        try body.rejectUnknownFields(allowed: Self.fieldNames)
        receiptData = try RequestFieldRules.base64Receipt(body.requiredString("receiptData"), field: "receiptData")
    }
}
