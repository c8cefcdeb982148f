/// Every bound the HTTP server's layers enforce, in one place (TIGER_STYLE:
/// a named limit on everything). Sizes are in bytes, durations in
/// milliseconds. A listener may lower or raise the per-path body limit
/// (`HTTPBodyLimits`) and the connection count (`HTTPServer.Configuration`).
public enum HTTPServerLimits {
    // MARK: HTTP/1.1 framing (RFC 9112).

    /// The request line, CRLF excluded; longer answers 414.
    public static let requestLineBytesMax = 8 * 1024
    /// The whole header block (request line and fields); larger answers 431.
    public static let headerBlockBytesMax = 16 * 1024
    /// Header field lines per request (trailers count too); more answers 431.
    public static let headerFieldCountMax = 100
    /// A request body after de-chunking, unless `HTTPBodyLimits` says
    /// otherwise for the path; larger answers 413.
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

    // MARK: Server (the shared HTTP/1.1 + h2c port).

    /// Request bytes one server holds at once over all its connections
    /// (`HTTPServer.Configuration.requestBytesBufferedMax`): 64 MiB, a
    /// hundred of the largest bodies (the receipt route's 768 KiB), well
    /// inside a gateway's memory; past it, requests are answered 503.
    public static let requestBytesBufferedMax = 64 * 1024 * 1024
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
    /// connection (slow readers hold no buffers for ever); HTTP/2 too
    /// (`HTTPServer.Configuration.responseWriteTimeoutMilliseconds`).
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
    /// Paths a listener may give a body limit of their own (`HTTPBodyLimits`).
    public static let bodyLimitPathCountMax = 16
}
