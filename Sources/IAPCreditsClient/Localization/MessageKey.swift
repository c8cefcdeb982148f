/// Everything the library can tell the user, one key per situation.
public enum MessageKey: Sendable, Hashable {
    /// A gateway problem.
    case problem(ProblemCode)
    /// No answer from the gateway.
    case offline
    /// An answer that is not the documented one.
    case unexpectedAnswer
    /// The user is signed out.
    case notSignedIn
    /// StoreKit says the purchase waits for approval (Ask to Buy, SCA).
    case purchasePending
    case purchaseCancelled
    /// StoreKit failed before taking payment.
    case purchaseFailed
    /// StoreKit could not verify the transaction it returned.
    case purchaseUnverified
    /// The package has no App Store product right now.
    case productUnavailable
    /// Another purchase is already running.
    case purchaseInProgress
    /// Paid; the credit is being retried in the background.
    case awaitingCredit
    /// Bought on this device by another account: it waits for that account.
    case otherAccountPurchase
    /// Credited now (or earlier): the number of credits added.
    case credited(Int64)
}
