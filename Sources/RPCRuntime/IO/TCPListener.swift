#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking listening TCP socket for servers that run their own
/// protocol on an `EventLoop` (the Gateway's HTTP/1.1 + h2c listener). The
/// listener owns its descriptor and closes it in `close()` or `deinit`.
/// Loop-agnostic: register `descriptor` with a loop and call `accept()`
/// when it is readable.
public final class TCPListener: @unchecked Sendable {
    /// The listening descriptor; valid until `close()`.
    public let descriptor: Int32
    /// The port actually bound (useful with port 0).
    public let port: Int
    private var isClosed = false

    /// Binds `host:port` (an IP literal or a name resolved once at start-up)
    /// and listens with `backlog` pending connections.
    public init(host: String, port: Int, backlog: Int32) throws {
        let (fd, boundPort) = try Socket.listen(host: host, port: port, backlog: backlog)
        descriptor = fd
        self.port = boundPort
    }

    deinit { close() }

    /// One pending connection as a non-blocking, close-on-exec socket with
    /// TCP_NODELAY; nil when none is pending (or it vanished before accept).
    public func accept() throws -> ConnectedSocket? {
        guard !isClosed, let accepted = try Socket.accept(descriptor) else { return nil }
        return ConnectedSocket(adopting: accepted.fd, remotePeer: accepted.peer)
    }

    /// Closes the descriptor (unregister it from its loop first). Idempotent;
    /// call it from the thread that uses the listener.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(descriptor)
    }
}
