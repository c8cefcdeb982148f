/// Every bound of the App Store Server API client in one place (TIGER_STYLE:
/// a named maximum for every buffer, queue, loop and wait).
public struct AppStoreServerAPILimits: Sendable, Hashable {
    /// Largest response body accepted; a longer answer is cut off and fails
    /// (`responseTooLarge`). A full history page (20 JWS) is about 100 KiB.
    public var responseBodyBytesMax: Int = 1024 * 1024
    /// Requests in flight at once per environment (HTTP/2 streams on its one connection).
    public var concurrentRequestsMax: Int = 16
    /// Requests waiting for a free stream per environment; beyond it a
    /// request fails at once (`overloaded`, retryable).
    public var queuedRequestsMax: Int = 256
    /// TCP connect plus TLS handshake.
    public var connectTimeout: Duration = .seconds(10)
    /// One attempt, from sending the request to the last byte of the answer.
    public var requestTimeout: Duration = .seconds(30)
    /// Attempts per call, the first included (retries = attempts - 1).
    public var attemptsMax: Int = 4
    /// First backoff after a retryable failure without `Retry-After`; doubles per attempt.
    public var backoffInitial: Duration = .milliseconds(250)
    /// Longest backoff between two attempts.
    public var backoffMax: Duration = .seconds(8)
    /// Longest `Retry-After` obeyed; a longer one ends the call at once with
    /// `rateLimited` carrying the wait, for the caller to schedule.
    public var retryAfterMax: Duration = .seconds(60)
    /// Total time a call may spend waiting between attempts.
    public var retryWaitTotalMax: Duration = .seconds(120)
    /// Pages one pagination helper call reads before it stops (and returns
    /// the token to resume from).
    public var pagesMax: Int = 1000
    /// Lifetime of each JWT (`exp - iat`); Apple refuses more than 60 minutes.
    public var tokenLifetimeSeconds: Int64 = 20 * 60
    /// How long one JWT is reused before a fresh one is signed; 0 signs one
    /// per request. Kept well under `tokenLifetimeSeconds`, so a reused
    /// token always has most of its life left.
    public var tokenReuseSeconds: Int64 = 5 * 60
    /// Apple's hard limit on `exp - iat`.
    public static let tokenLifetimeSecondsMax: Int64 = 60 * 60
    /// Nesting accepted in a response document.
    public var jsonDepthMax: Int = 16

    public init() {}

    public static let `default` = AppStoreServerAPILimits()

    /// Refuses bounds that cannot work (zero pages, a JWT Apple refuses, ...).
    func validate() throws(AppStoreServerAPIConfigurationError) {
        func check(_ condition: Bool, _ name: String) throws(AppStoreServerAPIConfigurationError) {
            if !condition {
                throw AppStoreServerAPIConfigurationError(setting: "limits.\(name)", reason: "out of range")
            }
        }
        try check(responseBodyBytesMax > 0, "responseBodyBytesMax")
        try check(concurrentRequestsMax > 0, "concurrentRequestsMax")
        try check(queuedRequestsMax >= 0, "queuedRequestsMax")
        try check(connectTimeout > .zero && requestTimeout > .zero, "timeouts")
        try check(attemptsMax >= 1 && attemptsMax <= 20, "attemptsMax")
        try check(backoffInitial > .zero && backoffMax >= backoffInitial, "backoff")
        try check(retryAfterMax >= .zero && retryWaitTotalMax >= .zero, "retry waits")
        try check(pagesMax >= 1, "pagesMax")
        try check(
            tokenLifetimeSeconds > 60 && tokenLifetimeSeconds <= Self.tokenLifetimeSecondsMax, "tokenLifetimeSeconds")
        try check(tokenReuseSeconds >= 0 && tokenReuseSeconds * 2 <= tokenLifetimeSeconds, "tokenReuseSeconds")
        try check(jsonDepthMax >= 4, "jsonDepthMax")
    }
}
