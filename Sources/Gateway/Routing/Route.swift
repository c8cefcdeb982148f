/// The gateway's routes, after matching method and path.
public enum Route: Sendable, Equatable {
    case balance
    case packages
    /// The user's own points ledger, newest first.
    case ledger
    /// The user's own purchases, newest first.
    case transactions
    case verifyTransaction
    /// A StoreKit 1 app receipt (the only route with a larger body limit).
    case verifyReceipt
    /// The raw path segment; validate it with the transactionId rule.
    case transactionStatus(transactionId: String)
    case accountToken
    /// The user's consent to share consumption data with Apple (GET / PUT).
    case consumptionConsent
    case setConsumptionConsent
    case appleNotifications
    case health
    case readiness
}
