#if canImport(Glibc)
import Glibc
#endif

/// TLS on a socket: `startServerTLS` on an accepted socket (or
/// `startClientTLS` on a connected one), then `continueTLSHandshake()` on
/// each readiness event until `.complete`; from then on `read`/`write`
/// carry plaintext through TLS and `negotiatedProtocol` tells the ALPN choice.
extension ConnectedSocket {
    /// Where a handshake step left off.
    public enum TLSHandshakeOutcome: Sendable, Equatable {
        case complete
        /// Call again once the socket is readable.
        case wantsReadable
        /// Call again once the socket is writable.
        case wantsWritable
        /// Not TLS or a failed negotiation: close the socket.
        case failed(reason: String)
    }

    /// Makes this socket a TLS server endpoint; the handshake happens in
    /// `continueTLSHandshake()`. Call once, before any read or write.
    public func startServerTLS(_ context: TLSServerContext) throws {
        precondition(tls == nil, "TLS already started")
        guard descriptor >= 0 else { throw SystemError(call: "startServerTLS", errorNumber: EBADF) }
        tls = try TLSTransport(context: context.context, fd: descriptor, server: true)
    }

    /// Makes this socket a TLS client endpoint that verifies the server
    /// with `context` (chain and host name); the handshake happens in
    /// `continueTLSHandshake()`. Call once, before any read or write.
    public func startClientTLS(_ context: TLSClientContext) throws {
        precondition(tls == nil, "TLS already started")
        guard descriptor >= 0 else { throw SystemError(call: "startClientTLS", errorNumber: EBADF) }
        tls = try TLSTransport(context: context.context, fd: descriptor, server: false)
    }

    /// Advances the handshake without blocking. A client's refusal of the
    /// server's certificate names the reason ("hostname mismatch", ...).
    public func continueTLSHandshake() -> TLSHandshakeOutcome {
        guard descriptor >= 0, let tls else { return .failed(reason: "no TLS session") }
        switch tls.handshake() {
        case .complete: return .complete
        case .wantsReadable: return .wantsReadable
        case .wantsWritable: return .wantsWritable
        case .failed(let error):
            guard let verification = tls.verificationFailure else { return .failed(reason: error.description) }
            return .failed(reason: "\(error.description) (\(verification))")
        }
    }

    /// Whether reads and writes go through TLS.
    public var isTLS: Bool { tls != nil }

    /// The ALPN protocol chosen in the handshake ("h2", "http/1.1"), if any.
    public var negotiatedProtocol: String? { tls?.negotiatedProtocol }

    /// True when the last TLS read or write stopped until the socket is
    /// writable (TLS may need to write while reading): watch writability
    /// and retry the read then.
    public var tlsNeedsWritable: Bool { tls?.needsWritable ?? false }

    /// True when TLS already holds decrypted input: no readiness event
    /// will announce it, so read it without waiting for one.
    public var hasBufferedInput: Bool { (tls?.bufferedByteCount ?? 0) > 0 }

    /// Hands the TLS session to a new owner together with the descriptor
    /// (see `HTTP2Server.adopt(socket:initialBytes:onClose:)`).
    func releaseTransport() -> (fd: Int32, transport: any ByteTransport) {
        let session = tls
        tls = nil
        let fd = releaseDescriptor()
        return (fd, session ?? PlainTransport(fd: fd))
    }

    static func outcome(of read: TransportRead) -> ReadOutcome {
        switch read {
        case .bytes(let count): return .bytes(count)
        case .wouldBlock: return .wouldBlock
        case .endOfStream: return .endOfStream
        case .failed(let error): return .failed(errorNumber: (error as? SystemError)?.errorNumber ?? EPROTO)
        }
    }

    static func outcome(of write: TransportWrite) -> WriteOutcome {
        switch write {
        case .wrote(let count): return .wrote(count)
        case .wouldBlock: return .wouldBlock
        case .failed(let error): return .failed(errorNumber: (error as? SystemError)?.errorNumber ?? EPROTO)
        }
    }
}
