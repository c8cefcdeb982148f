/// The settings of `RequestAdmission`: `MAX_CONCURRENT_REQUESTS`,
/// `NOTIFICATION_RATE_LIMIT_PER_SECOND` and `NOTIFICATION_RATE_LIMIT_BURST`.
public struct AdmissionLimits: Sendable, Equatable {
    /// Requests this process handles at once (health probes not counted).
    public var concurrentRequestsMax: Int
    /// Notifications per client address: rate and burst.
    public var notificationRule: TokenBucketTable.Rule
    /// Client addresses whose buckets are kept at once.
    public var rateLimitedClientsMax: Int

    public init(
        concurrentRequestsMax: Int = GatewayLimits.concurrentRequestsMax,
        notificationRule: TokenBucketTable.Rule = TokenBucketTable.Rule(
            ratePerSecond: GatewayLimits.notificationRatePerSecond, burst: GatewayLimits.notificationRateBurst),
        rateLimitedClientsMax: Int = GatewayLimits.rateLimitedClientsMax
    ) {
        precondition(concurrentRequestsMax > 0)
        self.concurrentRequestsMax = concurrentRequestsMax
        self.notificationRule = notificationRule
        self.rateLimitedClientsMax = rateLimitedClientsMax
    }
}
