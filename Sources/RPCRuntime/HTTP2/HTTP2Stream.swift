import RPCCore

/// Receives one HTTP/2 stream's events, on the connection's event loop.
public protocol HTTP2StreamDelegate: AnyObject {
    /// A HEADERS block: request or response headers, or trailers.
    func streamDidReceiveHeaders(_ stream: HTTP2Stream, headers: [HTTPHeaderField], endStream: Bool)
    /// A DATA chunk; `bytes` is empty when only END_STREAM arrived.
    func streamDidReceiveData(_ stream: HTTP2Stream, bytes: [UInt8], endStream: Bool)
    /// The stream is gone: `errorCode` 0 after a normal close, otherwise the
    /// RST_STREAM code, or `HTTP2ErrorCodes.connectionClosed` when the connection dropped.
    func streamDidClose(_ stream: HTTP2Stream, errorCode: UInt32)
    /// Server side: this stream's DATA would make the connection hold more
    /// request bytes than `RPCLimits.requestBytesBufferedPerConnectionMax`;
    /// the chunk was not delivered. Answer or reset the stream and drop what
    /// it buffered (its count is released after this returns).
    func streamDidExceedBufferedBytesLimit(_ stream: HTTP2Stream)
    /// Server side: the header block this stream is receiving has grown to
    /// `bytes` (each field's name and value as decoded, plus 32, as
    /// SETTINGS_MAX_HEADER_LIST_SIZE counts), before `streamDidReceiveHeaders`.
    /// False: the block's fields are not kept (the rest is still decoded,
    /// for HPACK's table, and not asked about), and when it completes
    /// `streamDidReceiveHeaders` gets no fields; the delegate answers or
    /// resets the stream then.
    func streamIsReceivingHeaders(_ stream: HTTP2Stream, bytes: Int) -> Bool
}

extension HTTP2StreamDelegate {
    /// By default the stream is reset with ENHANCE_YOUR_CALM.
    public func streamDidExceedBufferedBytesLimit(_ stream: HTTP2Stream) {
        stream.reset(errorCode: HTTP2Stream.ErrorCode.enhanceYourCalm)
    }

    /// By default a block is held up to `RPCLimits.headerListBytesMax`.
    public func streamIsReceivingHeaders(_ stream: HTTP2Stream, bytes: Int) -> Bool { true }
}

/// One HTTP/2 stream. Loop-confined: use it only on its connection's event loop.
public final class HTTP2Stream {
    /// HTTP/2 error codes used with `reset(errorCode:)`.
    public enum ErrorCode {
        public static let noError: UInt32 = 0x0
        public static let protocolError: UInt32 = 0x1
        public static let internalError: UInt32 = 0x2
        public static let refusedStream: UInt32 = 0x7
        public static let cancel: UInt32 = 0x8
        public static let enhanceYourCalm: UInt32 = 0xB
    }

    public let id: Int32
    public private(set) weak var connection: HTTP2Connection?
    public var delegate: (any HTTP2StreamDelegate)?

    // Inbound headers being assembled.
    var receivingHeaders: [HTTPHeaderField] = []
    var receivingHeaderBytes = 0
    /// The delegate refused to hold the block in progress (`streamIsReceivingHeaders`).
    var droppingReceivedHeaders = false
    // Outbound body, served by nghttp2's data provider.
    var outbound: [UInt8] = []
    var outboundIndex = 0
    var outboundEnded = false
    var pendingTrailers: [HTTPHeaderField]?
    var dataDeferred = false
    var hasDataProvider = false
    public internal(set) var isClosed = false
    /// RST_STREAM code to send once our END_STREAM is on the wire.
    var resetAfterEndStream: UInt32?
    /// Our END_STREAM is serialized: the answer (or request) is complete,
    /// and a reset from here on costs the peer nothing of ours.
    var endStreamSent = false
    /// Server side, with a response write timeout: when our response was
    /// submitted; nil before, and once its END_STREAM is serialized.
    var responsePendingSince: ContinuousClock.Instant?

    init(id: Int32, connection: HTTP2Connection) {
        self.id = id
        self.connection = connection
    }

    /// The remote peer's address.
    public var remotePeer: String { connection?.remotePeer ?? "" }

    /// Sends response headers (server) and ends the stream when `endStream`.
    public func sendHeaders(_ headers: [HTTPHeaderField], endStream: Bool) {
        connection?.sendHeaders(on: self, headers: headers, endStream: endStream)
    }

    /// Queues body bytes; `endStream` closes our side after them.
    public func sendData(_ bytes: [UInt8], endStream: Bool) {
        connection?.sendData(on: self, bytes: bytes, endStream: endStream)
    }

    /// Queues trailers, sent after all queued data, ending the stream.
    public func sendTrailers(_ trailers: [HTTPHeaderField]) {
        connection?.sendTrailers(on: self, trailers: trailers)
    }

    /// Server side: the delegate has handed on or dropped every request
    /// byte it received so far; they no longer count against the
    /// connection's `requestBytesBufferedPerConnectionMax` (a closed stream's
    /// are released anyway).
    public func releaseBufferedBytes() {
        connection?.releaseBufferedBytes(of: self)
    }

    /// Sends RST_STREAM.
    public func reset(errorCode: UInt32 = ErrorCode.cancel) {
        connection?.reset(self, errorCode: errorCode)
    }

    /// Sends a complete response (headers, and `body` when not empty)
    /// before the request finished, then, once its END_STREAM is on the
    /// wire, RST_STREAM(NO_ERROR) so the client stops sending its body
    /// (RFC 9113 §8.1). With `thenReset` false the client may finish its
    /// request (the delegate bounds what it reads of it).
    public func respondEarly(_ headers: [HTTPHeaderField], body: [UInt8] = [], thenReset: Bool = true) {
        resetAfterEndStream = thenReset ? ErrorCode.noError : nil
        if body.isEmpty {
            sendHeaders(headers, endStream: true)
        } else {
            sendHeaders(headers, endStream: false)
            sendData(body, endStream: true)
        }
    }
}
