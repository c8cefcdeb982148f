/// A paid purchase not yet credited, as the app may show it ("purchases
/// being processed") or quote to support. Holds no signed data.
public struct PendingPurchaseSummary: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        /// Being resubmitted; `nextAttemptInMilliseconds` is the backoff
        /// delay (nil while a submission is running or before the first).
        case awaitingCredit(CreditsError?, nextAttemptInMilliseconds: Int64?)
        /// This launch's retries are used up; resubmitted on the next launch
        /// (or `resumePendingPurchases()`).
        case waitingForNextLaunch(CreditsError)
        /// The gateway refused it: kept unfinished, support must act.
        case refused(CreditsError)
        /// Bought by another account on this device: kept for that account.
        case otherAccount
        /// StoreKit could not verify it: kept unfinished, never submitted.
        case unverifiedByStore(reason: String)
        /// No package names its product and the gateway does not know it yet.
        case unknownProduct
    }

    public let transactionId: String
    /// The App Store product, when known.
    public let appStoreProductId: String?
    public let state: State

    public init(transactionId: String, appStoreProductId: String?, state: State) {
        self.transactionId = transactionId
        self.appStoreProductId = appStoreProductId
        self.state = state
    }

    public var advice: RecoveryAdvice {
        switch state {
        case .awaitingCredit, .waitingForNextLaunch, .otherAccount: .retryLater
        case .refused(let error): error.advice
        case .unverifiedByStore, .unknownProduct: .contactSupport
        }
    }

    public func localizedMessage(_ language: MessageLanguage = .preferred()) -> String {
        let key: MessageKey =
            switch state {
            case .awaitingCredit, .waitingForNextLaunch: .awaitingCredit
            case .otherAccount: .otherAccountPurchase
            case .refused(let error): error.messageKey
            case .unverifiedByStore: .purchaseUnverified
            case .unknownProduct: .problem(.paymentProductNotFound)
            }
        return LocalizedMessages.text(for: key, in: language)
    }
}
