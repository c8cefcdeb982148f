/// The gateway's routes, after matching method and path.
public enum Route: Sendable, Equatable {
    case balance
    case packages
    case verifyTransaction
    /// The raw path segment; validate it with the transactionId rule.
    case transactionStatus(transactionId: String)
    case accountToken
    case appleNotifications
    case health
    case readiness
}
