import Locking
import RPCCore
import RPCRuntime

/// One TCP port serving HTTP/1.1
/// (keep-alive, pipelining, chunked bodies, slow-loris and idle timeouts)
/// and HTTP/2 with prior knowledge (h2c, detected by its preface and handed
/// to RPCRuntime's `HTTP2Server`), all on one `EventLoop` thread. Requests
/// of both protocols go to the same `HTTPResponder` on Tasks that prefer
/// the loop as their executor: a responder's own work, and everything it
/// awaits that does not hop elsewhere, runs on the loop thread between I/O
/// events, and its response is written without a hand-off between threads.
/// A responder must therefore not compute at length without hopping to
/// the cooperative pool (the gateway's and admin endpoints' work is short). With `Configuration.tls` set, every
/// connection does a TLS handshake first (bounded by
/// `tlsHandshakeTimeoutMilliseconds`, the request-head timeout by default) and ALPN picks the protocol: "h2" goes to HTTP/2, "http/1.1" or
/// no ALPN to HTTP/1.1, where the HTTP/2 preface is an HTTP/1.1 request
/// like any other (refused: RFC 9113 3.3 allows HTTP/2 in TLS only by
/// ALPN); plaintext clients are refused.
///
/// The gateway's public listener and every process's admin listener are one
/// of these. Use: `let server = try HTTPServer(configuration: .init(port: 0),
/// responder: app)`, `let port = try await server.start()`, and
/// `await server.shutdown(gracePeriod:)` at the end.
public final class HTTPServer: @unchecked Sendable {
    /// Where to listen and how many connections to keep.
    public struct Configuration: Sendable {
        public var host: String
        /// 0 lets the OS choose (tests).
        public var port: Int
        /// HTTP/1.1 and HTTP/2 connections together.
        public var connectionsMax: Int
        /// An HTTP/2 connection without streams this long gets GOAWAY.
        public var http2IdleTimeoutMilliseconds: Int64
        /// An HTTP/2 request must be complete this long after it started.
        public var http2RequestTimeoutMilliseconds: Int64
        /// Certificate chain and key: serve TLS only (ALPN "h2", "http/1.1").
        /// nil serves plaintext HTTP/1.1 and h2c.
        public var tls: TLSConfiguration?
        /// A TLS handshake must be complete this long after the accept.
        public var tlsHandshakeTimeoutMilliseconds: Int64
        /// The largest request body, by path.
        public var bodyLimits: HTTPBodyLimits
        /// Request bytes held at once over every connection (buffers,
        /// bodies and HTTP/2 header lists as decoded, HTTP/1.1 and HTTP/2);
        /// a request that would pass it is answered 503
        /// (`bufferedBytesExhausted`), its connection closed (HTTP/1.1) or
        /// its stream reset (HTTP/2).
        public var requestBytesBufferedMax: Int
        /// A response the client does not take within this time closes its
        /// connection: HTTP/1.1 output that made no progress this long, or
        /// (HTTP/2) a response not out this long after it was submitted,
        /// held by a zero flow-control window or a client that reads
        /// nothing (GOAWAY first, and the connection's other requests are
        /// cancelled).
        public var responseWriteTimeoutMilliseconds: Int64

        public init(
            host: String = "127.0.0.1", port: Int = 8080, connectionsMax: Int = HTTPServerLimits.connectionsMax,
            http2IdleTimeoutMilliseconds: Int64 = HTTPServerLimits.http2IdleTimeoutMilliseconds,
            http2RequestTimeoutMilliseconds: Int64 = HTTPServerLimits.http2RequestTimeoutMilliseconds,
            tls: TLSConfiguration? = nil,
            tlsHandshakeTimeoutMilliseconds: Int64 = HTTPServerLimits.requestHeadTimeoutMilliseconds,
            bodyLimits: HTTPBodyLimits = HTTPBodyLimits(),
            requestBytesBufferedMax: Int = HTTPServerLimits.requestBytesBufferedMax,
            responseWriteTimeoutMilliseconds: Int64 = HTTPServerLimits.responseWriteTimeoutMilliseconds
        ) {
            precondition(connectionsMax > 0 && http2IdleTimeoutMilliseconds > 0 && http2RequestTimeoutMilliseconds > 0)
            precondition(
                tlsHandshakeTimeoutMilliseconds > 0 && requestBytesBufferedMax > 0
                    && responseWriteTimeoutMilliseconds > 0)
            self.host = host
            self.port = port
            self.connectionsMax = connectionsMax
            self.http2IdleTimeoutMilliseconds = http2IdleTimeoutMilliseconds
            self.http2RequestTimeoutMilliseconds = http2RequestTimeoutMilliseconds
            self.tls = tls
            self.tlsHandshakeTimeoutMilliseconds = tlsHandshakeTimeoutMilliseconds
            self.bodyLimits = bodyLimits
            self.requestBytesBufferedMax = requestBytesBufferedMax
            self.responseWriteTimeoutMilliseconds = responseWriteTimeoutMilliseconds
        }
    }

    public let configuration: Configuration
    private let responder: any HTTPResponder
    private let http2: HTTP2Server
    private let tlsContext: TLSServerContext?
    private let boundPort = Mutex<Int?>(nil)
    /// Loop-confined, shared by every connection and stream.
    private let requestBytes: RequestBytesBudget

    // Loop-confined state. The connection tables are reached only through
    // the accessors below, which assert the loop on every touch.
    private var listener: TCPListener?
    private var connectionsOnLoop: [ObjectIdentifier: HTTP1Connection] = [:]
    private var handshakesOnLoop: [ObjectIdentifier: TLSHandshake] = [:]
    private var http2ConnectionsOnLoop: [ObjectIdentifier: HTTP2Connection] = [:]
    private var draining = false
    private var drainWaiters: [CheckedContinuation<Void, Never>] = []
    private var readBuffer: SharedReadBuffer?

    /// `loop`: serve on this loop, which its owner stops after `shutdown`,
    /// instead of a loop of the server's own (e.g. the loop the responder's
    /// backend clients use, so a request and its calls share one thread).
    public init(configuration: Configuration, responder: any HTTPResponder, loop: EventLoop? = nil) throws {
        self.configuration = configuration
        self.responder = responder
        tlsContext = try configuration.tls.map {
            try TLSServerContext(configuration: $0, alpnProtocols: ["h2", "http/1.1"])
        }
        var limits = RPCLimits()
        limits.connectionsMax = configuration.connectionsMax
        limits.concurrentStreamsMax = HTTPServerLimits.http2ConcurrentStreamsMax
        limits.streamWindowBytes = HTTPServerLimits.http2StreamWindowBytes
        limits.connectionWindowBytes = HTTPServerLimits.http2ConnectionWindowBytes
        limits.headerListBytesMax = HTTPServerLimits.headerBlockBytesMax
        limits.readChunkBytes = HTTPServerLimits.readChunkBytes
        // Each connection's own idle timer (moved by its streams opening and
        // closing, not sampled): GOAWAY once no stream was open this long.
        limits.idleTimeout = .milliseconds(configuration.http2IdleTimeoutMilliseconds)
        // Request bodies are bounded here by path and by the request timeout,
        // and held until the stream closes: admit every stream's largest body.
        let (streamsBodyBytes, overflow) = HTTPServerLimits.http2ConcurrentStreamsMax
            .multipliedReportingOverflow(by: configuration.bodyLimits.largestBytesMax)
        limits.requestBytesBufferedPerConnectionMax = overflow ? Int.max : streamsBodyBytes
        // The HTTP/2 server never listens itself: it serves the connections
        // this listener hands over, on its loop, which is ours too.
        let requestTimeout = configuration.http2RequestTimeoutMilliseconds
        let bodyLimits = configuration.bodyLimits
        let requestBytes = RequestBytesBudget(bytesMax: configuration.requestBytesBufferedMax)
        self.requestBytes = requestBytes
        let http2Configuration = HTTP2Server.Configuration(
            host: configuration.host, port: 0, limits: limits,
            responseWriteTimeout: .milliseconds(configuration.responseWriteTimeoutMilliseconds))
        http2 = try HTTP2Server(configuration: http2Configuration, loop: loop) { stream in
            HTTP2RequestStream(
                stream: stream, loop: stream.connection!.loop, responder: responder, bodyLimits: bodyLimits,
                requestTimeoutMilliseconds: requestTimeout, budget: requestBytes)
        }
    }

    /// The loop every connection runs on.
    public var loop: EventLoop { http2.loop }

    /// HTTP/1.1 connections (and those still sniffing for the h2c preface).
    private var connections: [ObjectIdentifier: HTTP1Connection] {
        _read { loop.assertInEventLoop(); yield connectionsOnLoop }
        _modify { loop.assertInEventLoop(); yield &connectionsOnLoop }
    }

    /// TLS connections still negotiating.
    private var handshakes: [ObjectIdentifier: TLSHandshake] {
        _read { loop.assertInEventLoop(); yield handshakesOnLoop }
        _modify { loop.assertInEventLoop(); yield &handshakesOnLoop }
    }

    /// Adopted HTTP/2 connections (they time out idleness themselves).
    private var http2Connections: [ObjectIdentifier: HTTP2Connection] {
        _read { loop.assertInEventLoop(); yield http2ConnectionsOnLoop }
        _modify { loop.assertInEventLoop(); yield &http2ConnectionsOnLoop }
    }

    /// The bound port once started.
    public var port: Int? { boundPort.withLock { $0 } }

    /// Binds and starts accepting; returns the bound port. Call once.
    @discardableResult
    public func start() async throws -> Int {
        let listener = try TCPListener(
            host: configuration.host, port: configuration.port, backlog: HTTPServerLimits.listenBacklog)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let accepted = loop.execute { [self] in
                do {
                    try loop.register(fd: listener.descriptor, events: .readable) { [weak self] _ in self?.acceptAll() }
                    readBuffer = SharedReadBuffer()
                    self.listener = listener
                    continuation.resume()
                } catch {
                    listener.close()
                    continuation.resume(throwing: error)
                }
            }
            if !accepted {
                listener.close()
                continuation.resume(throwing: SystemError(call: "HTTPServer.start after shutdown", errorNumber: 22))
            }
        }
        boundPort.withLock { $0 = listener.port }
        return listener.port
    }

    /// Open connections (HTTP/1.1 and HTTP/2) right now.
    public func connectionCount() async -> Int {
        await withCheckedContinuation { continuation in
            let accepted = loop.execute { [self] in
                continuation.resume(returning: connections.count + http2Connections.count + handshakes.count)
            }
            if !accepted { continuation.resume(returning: 0) }
        }
    }

    /// Graceful stop: no new connections; idle HTTP/1.1 connections close
    /// now, busy ones after their response (Connection: close); HTTP/2
    /// connections get GOAWAY and finish their streams. Whatever is still
    /// open after `gracePeriod` is closed. Stops the event loop (unless it was lent).
    public func shutdown(gracePeriod: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = loop.execute { [self] in
                drainWaiters.append(continuation)
                if !draining {
                    draining = true
                    closeListener()
                    for handshake in Array(handshakes.values) { handshake.cancel() }
                    handshakes = [:]
                    for connection in Array(connections.values) { connection.drain() }
                    loop.schedule(after: gracePeriod) { [self] in
                        for connection in Array(connections.values) { connection.forceClose() }
                    }
                }
                resumeDrainWaitersIfDone()
            }
            if !accepted { continuation.resume() }
        }
        await http2.shutdown(gracePeriod: gracePeriod)
    }

    // MARK: Loop-confined

    private func resumeDrainWaitersIfDone() {
        guard draining, connections.isEmpty, handshakes.isEmpty else { return }
        let waiters = drainWaiters
        drainWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    private func closeListener() {
        guard let listener else { return }
        loop.unregister(fd: listener.descriptor)
        listener.close()
        self.listener = nil
    }

    private func acceptAll() {
        for _ in 0..<HTTPServerLimits.acceptsPerWakeMax {
            guard let listener, !draining, readBuffer != nil else { return }
            let socket: ConnectedSocket
            do {
                guard let accepted = try listener.accept() else { return }
                socket = accepted
            } catch {
                // EMFILE and the like: stop for this wake-up; the listener
                // stays readable and is retried on the next one.
                return
            }
            guard connections.count + http2Connections.count + handshakes.count < configuration.connectionsMax else {
                socket.close()
                continue
            }
            if let tlsContext {
                startHandshake(socket, context: tlsContext)
            } else {
                startHTTP1(socket, sniffsHTTP2Preface: true)
            }
        }
    }

    private func startHandshake(_ socket: ConnectedSocket, context: TLSServerContext) {
        do {
            try socket.startServerTLS(context)
        } catch {
            return socket.close()
        }
        let handshake = TLSHandshake(socket: socket, loop: loop)
        let key = ObjectIdentifier(handshake)
        // Weak throughout: a server dropped without `shutdown` (a test that
        // failed early) leaves connections that must not reach it.
        handshake.onFinish = { [weak self] success in
            guard let self else { return socket.close() }
            handshakes[key] = nil
            if success && !draining {
                if socket.negotiatedProtocol == "h2" {
                    adoptHTTP2(socket, initialBytes: [])
                } else {
                    // HTTP/2 over TLS only by ALPN (RFC 9113 3.3): no sniffing.
                    startHTTP1(socket, sniffsHTTP2Preface: false)
                }
            } else {
                socket.close()
            }
            resumeDrainWaitersIfDone()
        }
        handshakes[key] = handshake
        handshake.start(timeoutMilliseconds: configuration.tlsHandshakeTimeoutMilliseconds)
    }

    private func startHTTP1(_ socket: ConnectedSocket, sniffsHTTP2Preface: Bool) {
        guard let readBuffer else { return socket.close() }
        let connection = HTTP1Connection(
            socket: socket, loop: loop, responder: responder, readBuffer: readBuffer,
            bodyLimits: configuration.bodyLimits,
            budget: requestBytes, sniffsHTTP2Preface: sniffsHTTP2Preface,
            responseWriteTimeoutMilliseconds: configuration.responseWriteTimeoutMilliseconds)
        let key = ObjectIdentifier(connection)
        connection.onClose = { [weak self] in
            guard let self else { return }
            connections[key] = nil
            resumeDrainWaitersIfDone()
        }
        connection.onHandOver = { [weak self] socket, bytes in
            guard let self else { return socket.close() }
            connections[key] = nil
            adoptHTTP2(socket, initialBytes: bytes)
            resumeDrainWaitersIfDone()
        }
        connections[key] = connection
        connection.start()
    }

    private func adoptHTTP2(_ socket: ConnectedSocket, initialBytes: [UInt8]) {
        guard !draining else { return socket.close() }
        var key: ObjectIdentifier?
        do {
            let connection = try http2.adopt(socket: socket, initialBytes: initialBytes) { [weak self] in
                if let self, let key { http2Connections[key] = nil }
            }
            if !connection.isClosed {
                key = ObjectIdentifier(connection)
                http2Connections[ObjectIdentifier(connection)] = connection
            }
        } catch {
            // The HTTP/2 server closed the descriptor and counted nothing.
        }
    }
}
