#if canImport(Glibc)
import Glibc
#endif
import Locking
import RPCCore

/// An h2c (prior knowledge) or TLS+ALPN "h2" HTTP/2 server on one event loop.
/// Generic over what it serves: each new stream gets a delegate from
/// `makeStreamDelegate`, called on the loop. Used by `RPCServer` for gRPC and
/// reusable for a JSON API.
public final class HTTP2Server: @unchecked Sendable {
    /// Where to listen and how.
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var limits: RPCLimits
        public var tls: TLSConfiguration?
        /// Pending connections the kernel queues before we accept them.
        public var backlog: Int32
        /// A response not out within this time of its submission (its last
        /// frame serialized, and the socket taking every byte serialized)
        /// closes its connection after GOAWAY(ENHANCE_YOUR_CALM): a peer
        /// that keeps its flow-control window at zero, or reads nothing,
        /// would otherwise hold the connection for ever, as streams that
        /// wait on it are not idle. nil: no bound. `RPCServer` and
        /// `HTTPServer` set 30 s by default.
        public var responseWriteTimeout: Duration?

        public init(
            host: String = "127.0.0.1", port: Int = 0, limits: RPCLimits = .default,
            tls: TLSConfiguration? = nil, backlog: Int32 = 1024, responseWriteTimeout: Duration? = nil
        ) {
            precondition(responseWriteTimeout.map { $0 > .zero } ?? true, "a response write timeout above zero")
            self.host = host
            self.port = port
            self.limits = limits
            self.tls = tls
            self.backlog = backlog
            self.responseWriteTimeout = responseWriteTimeout
        }
    }

    public typealias StreamDelegateFactory = @Sendable (HTTP2Stream) -> any HTTP2StreamDelegate

    public let configuration: Configuration
    public let loop: EventLoop
    /// The loop was made here (stopped by `shutdown`), not lent by a caller.
    private let ownsLoop: Bool
    private let makeStreamDelegate: StreamDelegateFactory
    private let boundPort = Mutex<Int?>(nil)
    private let tlsContext: TLSContext?

    // Loop-confined state.
    private var listenerFD: Int32 = -1
    private var connections: [ObjectIdentifier: HTTP2Connection] = [:]
    private var shuttingDown = false
    private var shutdownWaiters: [CheckedContinuation<Void, Never>] = []

    /// `loop`: serve on this loop, which its owner stops after `shutdown`,
    /// instead of a loop of the server's own.
    public init(
        configuration: Configuration, loop lentLoop: EventLoop? = nil,
        makeStreamDelegate: @escaping StreamDelegateFactory
    ) throws {
        self.configuration = configuration
        self.makeStreamDelegate = makeStreamDelegate
        self.tlsContext = try configuration.tls.map { try TLSContext(server: $0) }
        self.loop = try lentLoop ?? EventLoop(name: "http2-server")
        ownsLoop = lentLoop == nil
    }

    /// The bound port once started (useful with port 0).
    public var port: Int? { boundPort.withLock { $0 } }

    /// Binds and starts accepting. Returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        let (fd, port) = try Socket.listen(
            host: configuration.host, port: configuration.port, backlog: configuration.backlog)
        boundPort.withLock { $0 = port }
        let accepted = loop.execute { [self] in
            listenerFD = fd
            do {
                try loop.register(fd: fd, events: .readable) { [self] _ in acceptAll() }
            } catch {
                Glibc.close(fd)
                listenerFD = -1
            }
        }
        guard accepted else {
            Glibc.close(fd)
            throw SystemError(call: "HTTP2Server.start after shutdown", errorNumber: EINVAL)
        }
        return port
    }

    /// Number of open connections (for tests and metrics).
    public func connectionCount() async -> Int {
        await withCheckedContinuation { continuation in
            let accepted = loop.execute { [self] in continuation.resume(returning: connections.count) }
            if !accepted { continuation.resume(returning: 0) }
        }
    }

    /// Stops accepting, sends GOAWAY on every connection, lets in-flight
    /// streams finish for up to `gracePeriod`, then closes what is left and
    /// stops the event loop (unless it was lent).
    public func shutdown(gracePeriod: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = loop.execute { [self] in
                shutdownWaiters.append(continuation)
                guard !shuttingDown else { return finishShutdownIfDone() }
                shuttingDown = true
                closeListener()
                for connection in connections.values { connection.beginGracefulShutdown() }
                loop.schedule(after: gracePeriod) { [self] in
                    for connection in Array(connections.values) { connection.close() }
                }
                finishShutdownIfDone()
            }
            // The loop already exited: an earlier shutdown finished everything.
            if !accepted { continuation.resume() }
        }
        if ownsLoop { await loop.shutdown() }
    }

    private func finishShutdownIfDone() {
        guard shuttingDown, connections.isEmpty else { return }
        let waiters = shutdownWaiters
        shutdownWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    private func closeListener() {
        guard listenerFD >= 0 else { return }
        loop.unregister(fd: listenerFD)
        Glibc.close(listenerFD)
        listenerFD = -1
    }

    private func acceptAll() {
        // Bounded per wake-up so one busy listener cannot starve the loop.
        for _ in 0..<128 {
            guard listenerFD >= 0, !shuttingDown else { return }
            guard let accepted = try? Socket.accept(listenerFD) else { return }
            guard connections.count < configuration.limits.connectionsMax else {
                Glibc.close(accepted.fd)
                continue
            }
            var connection: HTTP2Connection?
            do {
                let transport: any ByteTransport
                if let tlsContext {
                    transport = try TLSTransport(context: tlsContext, fd: accepted.fd, server: true)
                } else {
                    transport = PlainTransport(fd: accepted.fd)
                }
                let created = try HTTP2Connection(
                    loop: loop, fd: accepted.fd, transport: transport, role: .server,
                    remotePeer: accepted.peer, limits: configuration.limits,
                    responseWriteTimeout: configuration.responseWriteTimeout)
                connection = created
                let factory = makeStreamDelegate
                created.onNewStream = { stream in factory(stream) }
                let key = ObjectIdentifier(created)
                created.onClose = { [self] in
                    connections[key] = nil
                    finishShutdownIfDone()
                }
                connections[key] = created
                try created.start()
            } catch {
                // The connection owns the socket once created; otherwise we do.
                if let connection { connection.close() } else { Glibc.close(accepted.fd) }
            }
        }
    }

    // MARK: Adopting connections accepted elsewhere

    /// Serves HTTP/2 on a connection another listener accepted (the
    /// Gateway's shared HTTP/1.1 + h2c port). Call on `loop`. Takes
    /// ownership of `fd` (closed on failure too); `initialBytes` are what
    /// the caller already read from it (the client preface and anything
    /// after it), fed to HTTP/2 before the socket. `onClose` runs on the
    /// loop once the connection is gone. Throws only when no connection
    /// could be made (then `onClose` never runs); otherwise `onClose` runs
    /// exactly once. Returns the connection (loop-confined) so the caller
    /// can watch it, e.g. to close it when idle. Plain TCP only (h2c).
    @discardableResult
    public func adopt(
        fd: Int32, initialBytes: [UInt8], remotePeer: String, onClose: @escaping () -> Void
    ) throws -> HTTP2Connection {
        loop.assertInEventLoop()
        guard !shuttingDown, connections.count < configuration.limits.connectionsMax else {
            Glibc.close(fd)
            throw SystemError(call: "HTTP2Server.adopt", errorNumber: shuttingDown ? ESHUTDOWN : EMFILE)
        }
        return try adopt(
            fd: fd, transport: PlainTransport(fd: fd), initialBytes: initialBytes, remotePeer: remotePeer,
            onClose: onClose)
    }

    /// Like `adopt(fd:initialBytes:remotePeer:onClose:)` for a socket that
    /// may already speak TLS (its handshake complete, e.g. ALPN chose "h2"
    /// on the Gateway's TLS port): takes ownership of the socket's
    /// descriptor and TLS session; `socket` is left released.
    @discardableResult
    public func adopt(
        socket: ConnectedSocket, initialBytes: [UInt8], onClose: @escaping () -> Void
    ) throws -> HTTP2Connection {
        loop.assertInEventLoop()
        let remotePeer = socket.remotePeer
        let (fd, base) = socket.releaseTransport()
        guard !shuttingDown, connections.count < configuration.limits.connectionsMax else {
            Glibc.close(fd)
            throw SystemError(call: "HTTP2Server.adopt", errorNumber: shuttingDown ? ESHUTDOWN : EMFILE)
        }
        return try adopt(fd: fd, transport: base, initialBytes: initialBytes, remotePeer: remotePeer, onClose: onClose)
    }

    private func adopt(
        fd: Int32, transport base: any ByteTransport, initialBytes: [UInt8], remotePeer: String,
        onClose: @escaping () -> Void
    ) throws -> HTTP2Connection {
        let transport = PrefixedTransport(prefix: initialBytes, base: base)
        let connection: HTTP2Connection
        do {
            connection = try HTTP2Connection(
                loop: loop, fd: fd, transport: transport, role: .server, remotePeer: remotePeer,
                limits: configuration.limits,
                responseWriteTimeout: configuration.responseWriteTimeout, tlsSession: base as? TLSTransport)
        } catch {
            Glibc.close(fd)
            throw error
        }
        let factory = makeStreamDelegate
        connection.onNewStream = { stream in factory(stream) }
        let key = ObjectIdentifier(connection)
        connection.onClose = { [self] in
            connections[key] = nil
            finishShutdownIfDone()
            onClose()
        }
        connections[key] = connection
        do {
            try connection.start()
        } catch {
            // Closing runs onClose: from here on the connection reports its end.
            connection.close()
            return connection
        }
        let tlsBuffered = ((base as? TLSTransport)?.bufferedByteCount ?? 0) > 0
        if transport.hasBufferedBytes || tlsBuffered { connection.readBufferedInput() }
        return connection
    }
}
