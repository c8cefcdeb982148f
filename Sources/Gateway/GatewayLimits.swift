import HTTPServer

/// Every bound the gateway's own layers enforce, in one place (TIGER_STYLE:
/// a named limit on everything). Sizes are in bytes, durations in milliseconds.
public enum GatewayLimits {
    // The HTTP/1.1 and HTTP/2 bounds of the listener are `HTTPServerLimits`
    // (module HTTPServer); only the receipt route's larger body is the gateway's.

    /// A request body on every route but the receipt route (the server's default).
    public static let requestBodyBytesMax = HTTPServerLimits.requestBodyBytesMax
    /// The body of POST /api/v1/payments/apple/receipts, the one route with
    /// a larger limit: a StoreKit 1 app receipt grows with the app's
    /// purchase history and is sent whole, base64 in JSON (up to
    /// `receiptDataBytesMax`, plus JSON's `\/` escapes, which Apple's
    /// JSONSerialization writes by default). Every other route keeps 64 KiB.
    public static let receiptRequestBodyBytesMax = 768 * 1024
    /// The path whose body may reach `receiptRequestBodyBytesMax`.
    static let receiptPath = "/api/v1/payments/apple/receipts"
    /// The body limits the gateway's listener enforces, per path.
    public static let bodyLimits = HTTPBodyLimits(
        defaultBytesMax: requestBodyBytesMax, bytesMaxByPath: [receiptPath: receiptRequestBodyBytesMax])

    /// The body limit of a request for `target` (origin-form, query
    /// ignored), decided from the request line before any body byte is read.
    public static func requestBodyBytesMax(target: String) -> Int {
        bodyLimits.bytesMax(target: target)
    }

    // MARK: Process.

    /// Default time in-flight requests get to finish on SIGTERM.
    public static let shutdownGrace = Duration.seconds(10)
    /// An `X-Request-Id` accepted from the client: 1...128 of [A-Za-z0-9._:-].
    public static let requestIdBytesMax = 128

    // MARK: Admission (`RequestAdmission`).

    /// Default of MAX_CONCURRENT_REQUESTS: requests handled at once by one
    /// gateway process (health probes not counted); beyond it, 503. Each
    /// holds at most a request body and one backend call, and the backend
    /// clients multiplex 100 streams per connection, so more would only queue.
    public static let concurrentRequestsMax = 1024
    /// Default of NOTIFICATION_RATE_LIMIT_PER_SECOND: notifications per
    /// second per client address (IPv4, or IPv6 /64) before 429.
    public static let notificationRatePerSecond: Int64 = 50
    /// Default of NOTIFICATION_RATE_LIMIT_BURST: notifications one address
    /// may send at once before the rate applies.
    public static let notificationRateBurst: Int64 = 100
    /// Client addresses whose notification buckets are kept at once.
    public static let rateLimitedClientsMax = 10_000
    /// `Retry-After` of the 503 answered at the concurrent-request cap.
    public static let overloadedRetryAfterSeconds: Int64 = 1
    /// `Retry-After` of other retryable 503s (a backend or Apple unavailable):
    /// a few readiness probe periods.
    public static let unavailableRetryAfterSeconds: Int64 = 5
    /// `Retry-After` of a 429 that has no exact wait of its own.
    public static let rateLimitedRetryAfterSeconds: Int64 = 1

    // MARK: Backend calls.

    /// Deadline of VerifyTransaction (Apple verification and the grant).
    public static let verifyTransactionTimeout = Duration.seconds(10)
    /// Deadline of VerifyReceipt: up to PaymentsService's 10 lookups at
    /// Apple, each verified and granted in turn.
    public static let verifyReceiptTimeout = Duration.seconds(30)
    /// Deadline of HandleNotification.
    public static let notificationTimeout = Duration.seconds(10)
    /// Deadline of read-only calls (balance, packages, status, token).
    public static let readTimeout = Duration.seconds(3)
    /// Balance calls one gateway process has in flight at once
    /// (`BalanceReadBatcher`); balance reads arriving meanwhile wait and
    /// share the next call. One call at a time makes the fullest calls:
    /// 8.5 users per call and 0.09–0.10 ms of CPU per read in all
    /// processes, against 7.5–7.9 and 0.11–0.14 ms with two
    /// (docs/PERFORMANCE.md, "Session 9: coalesced balance reads").
    public static let balanceReadCallsInFlightMax = 1
    /// Longest a balance call's slot waits, after the call, for the
    /// gateway's loop to catch up (`BalanceReadBatcher`), so the reads that
    /// arrived with the answer share the next call. A loop that is never
    /// idle sends the next call after this long; an idle one at once.
    public static let balanceReadCatchUpMax = Duration.microseconds(500)
    /// A balance call slower than this hands its slot on (it still
    /// finishes and answers its reads), so one slow PointsService instance
    /// holds up the reads behind it for this long, not for the whole read
    /// timeout. Calls take about a millisecond under load.
    public static let balanceReadCallSlotHoldMax = Duration.milliseconds(25)
    /// Users one GetBalances call reads (PointsService accepts up to 64).
    public static let balanceReadsPerCallMax = 64
    /// Balance reads waiting for a call; one more makes its own call.
    public static let balanceReadsWaitingMax = 4_096
    /// How often the readiness probe asks both services' health.
    public static let readinessProbeInterval = Duration.seconds(1)
    /// Deadline of one health check.
    public static let healthCheckTimeout = Duration.seconds(1)

    // MARK: JSON and API bodies.

    /// Nesting depth of arrays and objects in any JSON the gateway parses.
    public static let jsonDepthMax = 32
    /// Bytes of an unknown or repeated member or query parameter name that
    /// a problem's `field` echoes (the name is the client's own text).
    public static let echoedFieldNameBytesMax = 64

    /// What a problem's `field` echoes of a client's unknown name: its first
    /// `echoedFieldNameBytesMax` bytes when it is printable ASCII, else
    /// nothing (one character can be a letter and thousands of combining
    /// marks, so a cap in characters bounded nothing).
    static func echoedFieldName(_ name: some StringProtocol) -> String? {
        guard name.utf8.allSatisfy({ (0x20...0x7e).contains($0) }) else { return nil }
        return String(decoding: name.utf8.prefix(echoedFieldNameBytesMax), as: UTF8.self)
    }
    /// The verify body's `signedTransactionInfo` JWS.
    public static let signedTransactionInfoBytesMax = 64 * 1024
    /// The receipt body's `receiptData`: the base64 of PaymentsService's
    /// largest receipt, 512 KiB decoded (AppReceiptLimits' default).
    public static let receiptDataBytesMax = (512 * 1024 + 2) / 3 * 4
    // `productCode`, `transactionId`, `appStoreProductId` and the UUIDs are
    // the shared rules of `FieldRules`; their sizes are in `FieldLimits`.

    // MARK: Authentication.

    /// A bearer token (the compact JWT); longer is rejected before decoding.
    public static let bearerTokenBytesMax = 8 * 1024
    /// HMAC keys (JWT_HS256_SECRET, EMAIL_HASH_SECRET): at least the hash
    /// size, as RFC 7518 section 3.2 asks of HS256 keys.
    public static let hmacSecretBytesMin = 32
    /// ES256 public keys in JWT_ES256_PUBLIC_KEY's bundle: the current one
    /// and the next (or the last) while an issuer rotates, with room to
    /// spare. Each is tried in turn on a token the cache has not seen.
    public static let es256PublicKeysMax = 4
    /// Verified bearer tokens remembered (`VerifiedTokenCache`), each at
    /// most `verifiedTokenCachedBytesMax` long (longer ones are verified
    /// every time): about 4.5 MiB at worst, and only tokens the identity
    /// provider signed can fill it.
    static let verifiedTokensCachedMax = 2_048
    static let verifiedTokenCachedBytesMax = 2 * 1024
    /// Clock skew tolerated on `exp`, `nbf` and `iat`.
    public static let tokenClockLeewaySeconds: Int64 = 30
    /// RFC 5321 caps a forward path at 256 octets; an address is at most 254.
    public static let emailBytesMax = 254

    // MARK: History pages.

    /// Entries per page of GET /api/v1/points/ledger (PointsService's own bound).
    public static let ledgerPageSizeMax: Int32 = 200
    /// Purchases per page of GET /api/v1/payments/apple/transactions.
    public static let transactionPageSizeMax: Int32 = 100
}
