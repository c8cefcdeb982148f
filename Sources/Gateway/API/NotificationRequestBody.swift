/// The body Apple posts to /api/v1/payments/apple/notifications (App Store
/// Server Notifications V2): one signed payload, verified by PaymentsService.
public struct NotificationRequestBody: Sendable, Equatable {
    public static let fieldNames: Set<String> = ["signedPayload"]

    /// The notification JWS; never log it.
    public let signedPayload: String

    public init(jsonBody: [UInt8]) throws(ValidationError) {
        let body = try JSONRequestBody(jsonBody)
        try body.rejectUnknownFields(allowed: Self.fieldNames)
        signedPayload = try RequestFieldRules.compactJWS(body.requiredString("signedPayload"), field: "signedPayload")
    }
}
