/// PUT /api/v1/payments/apple/consumption-consent: whether the user lets us
/// tell Apple how much of a purchase they used when they ask for a refund
/// (Apple's CONSUMPTION_REQUEST). `{"consented": true|false}`, nothing else.
public struct ConsumptionConsentRequestBody: Sendable, Equatable {
    public static let fieldNames: Set<String> = ["consented"]

    public let consented: Bool

    public init(consented: Bool) { self.consented = consented }

    public init(jsonBody: [UInt8]) throws(ValidationError) {
        let body = try JSONRequestBody(jsonBody)
        try body.rejectUnknownFields(allowed: Self.fieldNames)
        consented = try body.requiredBool("consented")
    }
}
