#if canImport(Glibc)
import Glibc
#endif
import RPCCore

extension HTTP2Connection {
    /// The client side of HTTP/2 on a socket connected elsewhere, its TLS
    /// handshake (if any) complete: takes ownership of the socket's
    /// descriptor and TLS session (`socket` is left released), starts
    /// reading, and sends the preface and SETTINGS. Open requests with
    /// `startRequest(headers:body:delegate:)`. Call on `loop`; the returned
    /// connection is loop-confined. On failure the descriptor is closed.
    public static func client(adopting socket: ConnectedSocket, loop: EventLoop, limits: RPCLimits) throws
        -> HTTP2Connection
    {
        loop.assertInEventLoop()
        let remotePeer = socket.remotePeer
        let (fd, transport) = socket.releaseTransport()
        guard fd >= 0 else { throw SystemError(call: "HTTP2Connection.client", errorNumber: EBADF) }
        let connection: HTTP2Connection
        do {
            connection = try HTTP2Connection(
                loop: loop, fd: fd, transport: transport, role: .client,
                remotePeer: remotePeer, limits: limits)
        } catch {
            Glibc.close(fd)
            throw error
        }
        do {
            try connection.start()
        } catch {
            connection.close()
            throw error
        }
        // TLS may already hold the server's first frames (they can arrive
        // with the end of the handshake); no readiness event announces them.
        if ((transport as? TLSTransport)?.bufferedByteCount ?? 0) > 0 { connection.readBufferedInput() }
        return connection
    }
}
