/// How one tap on "buy" ended, with what to tell the user.
public enum PurchaseOutcome: Sendable, Hashable {
    /// Credited (now, or before: `already_granted`) and the StoreKit
    /// transaction finished; `balance` is the refreshed one (nil when the
    /// refresh failed; `grant.newBalance` still holds).
    case credited(VerifiedGrant, balance: CreditBalance?)
    /// StoreKit waits for approval; nothing was sent to the gateway. The
    /// transaction arrives later through the updates the client listens to.
    case pending
    /// The user closed the sheet; nothing was paid or sent.
    case cancelled
    /// StoreKit failed before payment; nothing was sent.
    case storeFailed(reason: String)
    /// The package has no App Store product right now.
    case productUnavailable
    /// Another purchase of this client is still running (a second tap).
    case alreadyInProgress
    /// The purchase could not start (e.g. the account token could not be fetched).
    case notStarted(CreditsError)
    /// Paid, but StoreKit could not verify the transaction: not sent, not
    /// finished, reported.
    case unverifiedByStore(transactionId: String)
    /// Paid and kept unfinished; the library resubmits it with backoff and on every launch.
    case awaitingCredit(transactionId: String, CreditsError)
    /// Paid, refused by the gateway: kept unfinished and reported (support must act).
    case refused(transactionId: String, CreditsError)
    /// Apple refunded or revoked it before it was credited: finished, nothing credited.
    case revoked(transactionId: String)

    public var advice: RecoveryAdvice {
        switch self {
        case .credited, .pending, .cancelled, .alreadyInProgress, .revoked: .nothingToDo
        case .storeFailed, .productUnavailable: .retryLater
        case .notStarted(let error), .awaitingCredit(_, let error), .refused(_, let error): error.advice
        case .unverifiedByStore: .contactSupport
        }
    }

    /// The message for the user.
    public func localizedMessage(_ language: MessageLanguage = .preferred()) -> String {
        LocalizedMessages.text(for: messageKey, in: language)
    }

    var messageKey: MessageKey {
        switch self {
        case .credited(let grant, _): .credited(grant.creditsAdded)
        case .pending: .purchasePending
        case .cancelled: .purchaseCancelled
        case .storeFailed: .purchaseFailed
        case .productUnavailable: .productUnavailable
        case .alreadyInProgress: .purchaseInProgress
        case .notStarted(let error), .refused(_, let error), .awaitingCredit(_, let error): error.messageKey
        case .unverifiedByStore: .purchaseUnverified
        case .revoked: .problem(.paymentTransactionRevoked)
        }
    }
}

extension PurchaseOutcome {
    /// A settlement (`.credited` or `.revoked`) of `transactionId`.
    func settles(_ transactionId: String) -> Bool {
        switch self {
        case .credited(let grant, _): grant.transactionId == transactionId
        case .revoked(let id): id == transactionId
        default: false
        }
    }

    var isRevoked: Bool {
        if case .revoked = self { true } else { false }
    }
}
