/// Every bound the gateway's pure layers enforce, in one place (TIGER_STYLE:
/// a named limit on everything). Sizes are in bytes, durations in milliseconds.
public enum GatewayLimits {
    // MARK: HTTP/1.1 framing (RFC 9112).

    /// The request line, CRLF excluded; longer answers 414.
    public static let requestLineBytesMax = 8 * 1024
    /// The whole header block (request line and fields); larger answers 431.
    public static let headerBlockBytesMax = 16 * 1024
    /// Header field lines per request (trailers count too); more answers 431.
    public static let headerFieldCountMax = 100
    /// A request body after de-chunking; larger answers 413.
    public static let requestBodyBytesMax = 64 * 1024
    /// The body of POST /api/v1/payments/apple/receipts, the one route with
    /// a larger limit: a StoreKit 1 app receipt grows with the app's
    /// purchase history and is sent whole, base64 in JSON (up to
    /// `receiptDataBytesMax`, plus JSON's `\/` escapes, which Apple's
    /// JSONSerialization writes by default). Every other route keeps 64 KiB.
    public static let receiptRequestBodyBytesMax = 768 * 1024
    /// The path whose body may reach `receiptRequestBodyBytesMax`.
    static let receiptPath = "/api/v1/payments/apple/receipts"

    /// The body limit of a request for `target` (origin-form, query
    /// ignored), decided from the request line before any body byte is read.
    public static func requestBodyBytesMax(target: String) -> Int {
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return path == receiptPath ? receiptRequestBodyBytesMax : requestBodyBytesMax
    }
    /// One chunk-size line including extensions (they are ignored, not unbounded).
    public static let chunkSizeLineBytesMax = 1024
    /// Empty lines tolerated before a request line (RFC 9112 §2.2 robustness).
    public static let leadingEmptyLineCountMax = 8

    // MARK: HTTP/1.1 connection.

    /// A whole request head must arrive within this time from its first byte,
    /// however slowly it trickles (slow-loris defence).
    public static let requestHeadTimeoutMilliseconds: Int64 = 10_000
    /// A declared request body must arrive within this time after its head.
    public static let requestBodyTimeoutMilliseconds: Int64 = 30_000
    /// An idle keep-alive connection is closed after this time.
    public static let keepAliveIdleTimeoutMilliseconds: Int64 = 30_000
    /// Requests served on one connection before it is closed.
    public static let requestsPerConnectionMax = 1_000
    /// Parsed requests waiting behind the one in flight (pipelining); reading
    /// pauses while the queue is full.
    public static let pipelinedRequestCountMax = 16

    // MARK: Server (the shared HTTP/1.1 + h2c port).

    /// Open client connections (HTTP/1.1 and HTTP/2 together); further
    /// accepts are closed at once.
    public static let connectionsMax = 10_000
    /// Pending connections the kernel queues before we accept them.
    public static let listenBacklog: Int32 = 1024
    /// Connections accepted per listener wake-up (fairness with open ones).
    public static let acceptsPerWakeMax = 128
    /// Bytes read per read call (one buffer shared by every connection).
    public static let readChunkBytes = 16 * 1024
    /// Reads per readiness event before yielding to other connections.
    public static let readsPerEventMax = 16
    /// A response the client does not read within this time closes the
    /// connection (slow readers hold no buffers for ever).
    public static let responseWriteTimeoutMilliseconds: Int64 = 30_000
    /// After our last byte, how long to drain the peer's input before
    /// closing (closing with unread input would reset the connection and
    /// could destroy the response still in flight).
    public static let closeLingerMilliseconds: Int64 = 1_000
    /// Input discarded while lingering before closing regardless.
    public static let closeLingerDiscardBytesMax = 256 * 1024
    /// HTTP/2: concurrent streams per connection.
    public static let http2ConcurrentStreamsMax = 100
    /// HTTP/2: per-stream receive window (a whole body fits in one window).
    public static let http2StreamWindowBytes = 128 * 1024
    /// HTTP/2: per-connection receive window.
    public static let http2ConnectionWindowBytes = 1024 * 1024
    /// HTTP/2: a stream's request (headers and body) must be complete
    /// within this time from its first HEADERS frame, or it is answered 408
    /// and reset (slow-loris over HTTP/2).
    public static let http2RequestTimeoutMilliseconds: Int64 = 30_000
    /// HTTP/2: a connection without open streams for this long gets GOAWAY.
    public static let http2IdleTimeoutMilliseconds: Int64 = 30_000
    /// HTTP/2: how often idle connections are looked for (at most).
    public static let http2IdleSweepMilliseconds: Int64 = 1_000
    /// Default time in-flight requests get to finish on SIGTERM.
    public static let shutdownGraceMilliseconds: Int64 = 10_000
    /// An `X-Request-Id` accepted from the client: 1...128 of [A-Za-z0-9._:-].
    public static let requestIdBytesMax = 128

    // MARK: Backend calls.

    /// Deadline of VerifyTransaction (Apple verification and the grant).
    public static let verifyTransactionTimeoutMilliseconds: Int64 = 10_000
    /// Deadline of VerifyReceipt: up to PaymentsService's 10 lookups at
    /// Apple, each verified and granted in turn.
    public static let verifyReceiptTimeoutMilliseconds: Int64 = 30_000
    /// Deadline of HandleNotification.
    public static let notificationTimeoutMilliseconds: Int64 = 10_000
    /// Deadline of read-only calls (balance, packages, status, token).
    public static let readTimeoutMilliseconds: Int64 = 3_000
    /// How often the readiness probe asks both services' health.
    public static let readinessProbeIntervalMilliseconds: Int64 = 1_000
    /// Deadline of one health check.
    public static let healthCheckTimeoutMilliseconds: Int64 = 1_000

    // MARK: JSON and API bodies.

    /// Nesting depth of arrays and objects in any JSON the gateway parses.
    public static let jsonDepthMax = 32
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
