/// Every bound the demo uses, in one place.
enum DemoLimits {
    /// Each socket send/receive gives up after this long.
    static let httpTimeoutSeconds = 10
    /// A response larger than this is refused.
    static let responseBytesMax = 1 << 20
    /// Lifetime of the bearer token the demo mints.
    static let tokenLifetimeSeconds: Int64 = 600
    /// How long the demo waits for a refund's clawback to show (bounded polling).
    static let settleAttemptsMax = 50
    static let settlePauseMilliseconds: UInt32 = 200
}
