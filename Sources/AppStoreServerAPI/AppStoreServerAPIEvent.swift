/// What the client reports to `AppStoreServerAPIConfiguration.eventSink`,
/// for the service's log: ids, paths, statuses and Apple's error codes,
/// never a JWT, key or signed payload.
public struct AppStoreServerAPIEvent: Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// An attempt is about to be sent.
        case attempt
        /// The attempt failed and the call will try again after `retryAfter`.
        case retry
        /// The call succeeded.
        case succeeded
        /// The call failed for good (`error`).
        case failed
    }

    public var kind: Kind
    public var environment: AppStoreServerEnvironment
    public var method: String
    /// The request path (ids included, which are not secret; no query).
    public var path: String
    /// 1-based attempt number.
    public var attempt: Int
    public var httpStatus: Int?
    public var error: AppStoreServerAPIError?
    public var retryAfter: Duration?

    public var description: String {
        var text = "app_store_api \(kind.rawValue) env=\(environment) \(method) \(path) attempt=\(attempt)"
        if let httpStatus { text += " status=\(httpStatus)" }
        if let error { text += " error=\(error)" }
        if let retryAfter { text += " retry_after=\(retryAfter)" }
        return text
    }
}
