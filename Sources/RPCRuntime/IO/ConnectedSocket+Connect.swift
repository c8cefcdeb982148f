#if canImport(Glibc)
import Glibc
#endif

/// Outbound connections for protocols run outside RPCRuntime's own client:
/// `connect(host:port:)`, wait for writability while `connected` is false,
/// then `finishConnect()`.
extension ConnectedSocket {
    /// Starts a non-blocking TCP connect (TCP_NODELAY, close-on-exec).
    /// `host` is an IP literal or a name resolved with getaddrinfo, which may
    /// block: call this on an event loop's thread, never on the cooperative
    /// pool. When `connected` is false, register the descriptor for
    /// writability and call `finishConnect()` once it is writable.
    public static func connect(host: String, port: Int) throws -> (socket: ConnectedSocket, connected: Bool) {
        let (fd, connected) = try Socket.connect(host: host, port: port)
        let peer = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        return (ConnectedSocket(adopting: fd, remotePeer: peer), connected)
    }

    /// The outcome of a non-blocking connect once the socket became
    /// writable: nil when connected, otherwise why it failed.
    public func finishConnect() -> SystemError? {
        guard descriptor >= 0 else { return SystemError(call: "connect", errorNumber: EBADF) }
        let code = Socket.pendingError(descriptor)
        return code == 0 ? nil : SystemError(call: "connect", errorNumber: code)
    }
}
