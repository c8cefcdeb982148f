/// What changed, for an app that updates its screens as things happen
/// (also for purchases settled in the background: approved pending
/// purchases, resubmissions, refunds).
public enum CreditsEvent: Sendable, Hashable {
    /// A purchase was credited (now or before) and its transaction finished.
    case credited(VerifiedGrant)
    /// Apple refunded or revoked a purchase; its transaction is finished.
    case revoked(transactionId: String)
    /// A purchase not yet credited changed state.
    case pendingPurchaseChanged(PendingPurchaseSummary)
    case balanceChanged(CreditBalance)
    case offersChanged(PackageOffers)
}
