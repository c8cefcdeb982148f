/// What one recovery pass did with the purchases not yet credited.
public struct RecoveryReport: Sendable, Hashable {
    public var credited: [VerifiedGrant] = []
    public var revoked: [String] = []
    /// Purchases still not credited, with why.
    public var pending: [PendingPurchaseSummary] = []
    /// Set when the pass could not run at all (e.g. offline: no account
    /// token); it is retried with backoff, never before the answer's
    /// Retry-After (a pass asked for sooner answers this failure again).
    public var failure: CreditsError?

    public init() {}
}
