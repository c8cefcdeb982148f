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

    // MARK: JSON and API bodies.

    /// Nesting depth of arrays and objects in any JSON the gateway parses.
    public static let jsonDepthMax = 32
    /// The verify body's `signedTransactionInfo` JWS.
    public static let signedTransactionInfoBytesMax = 64 * 1024
    /// `productCode`: [a-z0-9_]{1,64}.
    public static let productCodeBytesMax = 64
    /// `transactionId`: 1 to 32 decimal digits.
    public static let transactionIdDigitsMax = 32
    /// `appStoreProductId`: reverse-DNS product identifiers are short.
    public static let appStoreProductIdBytesMax = 255

    // MARK: Authentication.

    /// A bearer token (the compact JWT); longer is rejected before decoding.
    public static let bearerTokenBytesMax = 8 * 1024
    /// Clock skew tolerated on `exp`, `nbf` and `iat`.
    public static let tokenClockLeewaySeconds: Int64 = 30
    /// RFC 5321 caps a forward path at 256 octets; an address is at most 254.
    public static let emailBytesMax = 254
}
