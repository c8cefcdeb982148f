/// Who the verified token says is calling: the only source of user identity
/// (the app never sends a user id: docs/protocols/payments/apple-iap-protocol.md,
/// section 2). Never log `email`.
public struct AuthenticatedUser: Sendable, Equatable {
    /// The `sub` claim, a lower-cased UUID.
    public let userId: String
    /// The `email` claim as issued (for the starter-pack email hash).
    public let email: String

    public init(userId: String, email: String) {
        self.userId = userId
        self.email = email
    }
}
