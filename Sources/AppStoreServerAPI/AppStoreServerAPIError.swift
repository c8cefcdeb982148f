/// Why a call failed: the kind (a struct of `static let`s, so kinds can
/// grow), Apple's HTTP status and error body when there was one, the
/// `Retry-After` wait, and `isRetryable`, which says whether sending the
/// same request again could succeed. Never carries the JWT or the key.
public struct AppStoreServerAPIError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// HTTP 400: the request is wrong (see `apiErrorCode`).
        public static let badRequest = Kind(rawValue: "bad_request")
        /// HTTP 401: Apple refused the JWT (wrong key, ids, clock or claims).
        public static let unauthorized = Kind(rawValue: "unauthorized")
        /// HTTP 403.
        public static let forbidden = Kind(rawValue: "forbidden")
        /// HTTP 404 (e.g. 4040010: no such transaction in this environment).
        public static let notFound = Kind(rawValue: "not_found")
        /// HTTP 429; `retryAfter` holds the server's wait when it sent one.
        public static let rateLimited = Kind(rawValue: "rate_limited")
        /// HTTP 5xx.
        public static let serverError = Kind(rawValue: "server_error")
        /// Another HTTP status.
        public static let unexpectedStatus = Kind(rawValue: "unexpected_status")
        /// No connection could be made (refused, unreachable, connect timeout).
        public static let connectionFailed = Kind(rawValue: "connection_failed")
        /// The connection or stream dropped before the whole answer arrived.
        public static let connectionLost = Kind(rawValue: "connection_lost")
        /// The server's certificate or host name was refused, or it would not speak HTTP/2.
        public static let tlsFailed = Kind(rawValue: "tls_failed")
        /// No complete answer within `requestTimeout`.
        public static let timeout = Kind(rawValue: "timeout")
        /// The body exceeded `responseBodyBytesMax`.
        public static let responseTooLarge = Kind(rawValue: "response_too_large")
        /// A 2xx answer whose body is not what Apple documents.
        public static let invalidResponse = Kind(rawValue: "invalid_response")
        /// Too many requests already waiting (`queuedRequestsMax`).
        public static let overloaded = Kind(rawValue: "overloaded")
        /// An argument this client refuses before sending (e.g. a bad id).
        public static let invalidArgument = Kind(rawValue: "invalid_argument")
        /// The JWT could not be signed.
        public static let signingFailed = Kind(rawValue: "signing_failed")
        /// The task was cancelled or the client closed.
        public static let cancelled = Kind(rawValue: "cancelled")

        public var description: String { rawValue }
    }

    public var kind: Kind
    public var httpStatus: Int?
    public var apiErrorCode: APIErrorCode?
    public var apiErrorMessage: String?
    /// The server's `Retry-After`, when it sent one.
    public var retryAfter: Duration?
    /// Our own words on what happened (never secret).
    public var detail: String

    public init(
        kind: Kind, detail: String, httpStatus: Int? = nil, apiErrorCode: APIErrorCode? = nil,
        apiErrorMessage: String? = nil, retryAfter: Duration? = nil
    ) {
        self.kind = kind
        self.detail = detail
        self.httpStatus = httpStatus
        self.apiErrorCode = apiErrorCode
        self.apiErrorMessage = apiErrorMessage
        self.retryAfter = retryAfter
    }

    /// Whether the same request, sent again later, could succeed: transport
    /// failures, timeouts, 429, 5xx and Apple's "Retryable" error codes.
    /// Everything else (400, 401, 403, a plain 404, bad TLS, a malformed
    /// answer) fails the same way every time and needs a fix instead.
    public var isRetryable: Bool {
        if let apiErrorCode, apiErrorCode.isRetryable { return true }
        switch kind {
        case .connectionFailed, .connectionLost, .timeout, .rateLimited, .serverError, .overloaded: return true
        default: return false
        }
    }

    /// A 404 meaning "not in this environment" (the production-then-sandbox
    /// rule looks in sandbox after it): one of Apple's not-found codes for
    /// the data asked about (`notFoundInEnvironment`). A 404 without a code
    /// (a wrong base URL, a proxy), with a retryable code, or saying the app
    /// itself is unknown (4040003, wrong key or bundle) is a failure to fix,
    /// never a reason to refuse a purchase as unknown to Apple.
    public var isNotFound: Bool {
        guard kind == .notFound, let apiErrorCode else { return false }
        return Self.notFoundInEnvironment.contains(apiErrorCode)
    }

    /// Apple's 404 codes that say the transaction, original transaction,
    /// account or app transaction asked about does not exist here.
    public static let notFoundInEnvironment: Set<APIErrorCode> = [
        .transactionIdNotFound, .originalTransactionIdNotFound, .accountNotFound, .appTransactionDoesNotExist,
    ]

    public var description: String {
        var text = "\(kind)"
        if let httpStatus { text += " (HTTP \(httpStatus))" }
        if let apiErrorCode { text += " errorCode=\(apiErrorCode)" }
        if let apiErrorMessage { text += " \"\(apiErrorMessage)\"" }
        if let retryAfter { text += " retry-after=\(retryAfter)" }
        return text + ": " + detail
    }

    /// The kind for an HTTP status outside 2xx.
    static func kind(forStatus status: Int) -> Kind {
        switch status {
        case 400: .badRequest
        case 401: .unauthorized
        case 403: .forbidden
        case 404: .notFound
        case 429: .rateLimited
        case 500...599: .serverError
        default: .unexpectedStatus
        }
    }
}
