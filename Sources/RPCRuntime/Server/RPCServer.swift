import Locking
import RPCCore

/// A gRPC server for unary calls: an `HTTP2Server` whose streams are handled
/// by the `Router`'s handlers.
public final class RPCServer: Sendable {
    /// Server settings.
    public struct Configuration: Sendable {
        /// A host and port to listen on; port 0 lets the OS choose.
        public struct ListenAddress: Sendable, Hashable {
            public var host: String
            public var port: Int
            public init(host: String, port: Int) {
                self.host = host
                self.port = port
            }
        }

        public var listen: ListenAddress
        public var limits: RPCLimits
        public var tls: TLSConfiguration?
        /// Run the handlers' tasks on the server's event loop thread instead
        /// of the cooperative pool: for handlers that mostly wait (on a
        /// database), whose calls then cost no hand-off between threads.
        /// Handlers that compute at length belong on the pool.
        public var handlersOnLoop: Bool
        /// A response the client has not taken within this time of its
        /// submission closes the connection with GOAWAY(ENHANCE_YOUR_CALM)
        /// (`HTTP2Server.Configuration.responseWriteTimeout`). The services'
        /// calls are unary and their clients read answers as they come, so
        /// a response held this long means a stuck or hostile peer, whose
        /// streams would otherwise hold the connection and its buffered
        /// answers for ever. nil: no bound.
        public var responseWriteTimeout: Duration?

        /// The default response write timeout: 30 s, the public server's.
        public static let responseWriteTimeoutDefault: Duration = .seconds(30)

        public init(
            listen: ListenAddress, limits: RPCLimits = .default, tls: TLSConfiguration? = nil,
            handlersOnLoop: Bool = false,
            responseWriteTimeout: Duration? = Configuration.responseWriteTimeoutDefault
        ) {
            self.listen = listen
            self.limits = limits
            self.tls = tls
            self.handlersOnLoop = handlersOnLoop
            self.responseWriteTimeout = responseWriteTimeout
        }
    }

    public let configuration: Configuration
    public let router: Router
    /// The loop lent by the caller (who stops it after `shutdown`); nil: the server's own.
    private let lentLoop: EventLoop?
    private let server = Mutex<HTTP2Server?>(nil)

    /// `loop`: serve on this loop, which its owner stops after `shutdown`
    /// (e.g. the loop a database pool's sockets wait on), instead of a loop
    /// of the server's own.
    public init(configuration: Configuration, router: Router, loop: EventLoop? = nil) {
        self.configuration = configuration
        self.router = router
        lentLoop = loop
    }

    /// Binds and starts serving; returns the bound port. Call once.
    @discardableResult
    public func start() throws -> Int {
        let limits = configuration.limits
        let router = self.router
        let handlersOnLoop = configuration.handlersOnLoop
        let created = try HTTP2Server(
            configuration: .init(
                host: configuration.listen.host, port: configuration.listen.port,
                limits: limits, tls: configuration.tls, responseWriteTimeout: configuration.responseWriteTimeout
            ), loop: lentLoop
        ) { stream in
            // Called on the server's loop for every new stream.
            ServerCallHandler(
                stream: stream, router: router, limits: limits, loop: stream.connection!.loop,
                handlersOnLoop: handlersOnLoop)
        }
        server.withLock { current in
            precondition(current == nil, "RPCServer.start called twice")
            current = created
        }
        return try created.start()
    }

    /// The bound port once started.
    public var port: Int? { server.withLock { $0 }?.port }

    /// Open connections right now.
    public func connectionCount() async -> Int { await server.withLock { $0 }?.connectionCount() ?? 0 }

    /// GOAWAY to every client, in-flight calls finish within `gracePeriod`,
    /// new calls are refused; then everything is closed.
    public func shutdown(gracePeriod: Duration) async {
        await server.withLock { $0 }?.shutdown(gracePeriod: gracePeriod)
    }
}
