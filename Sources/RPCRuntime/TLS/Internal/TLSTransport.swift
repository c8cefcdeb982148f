#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import RPCCore

/// TLS over a non-blocking socket: OpenSSL drives the handshake inside the
/// first reads and writes. Owns its `SSL` (freed in deinit), not the socket.
final class TLSTransport: ByteTransport {
    private let ssl: OpaquePointer
    private let context: TLSContext
    private(set) var needsWritable = false
    /// The peer's identity once read (after the handshake); `.none` before.
    private var peerIdentityRead: PeerIdentity??

    init(context: TLSContext, fd: Int32, server: Bool) throws {
        guard let ssl = SSL_new(context.context) else { throw TLSError("SSL_new") }
        self.ssl = ssl
        self.context = context
        guard SSL_set_fd(ssl, fd) == 1 else { throw TLSError("SSL_set_fd") }
        if server {
            SSL_set_accept_state(ssl)
        } else {
            if let name = context.serverName {
                // SSL_set_tlsext_host_name (SNI) and SSL_set1_host (hostname
                // check). The name must be one of the certificate's DNS names:
                // never its subject CN, which OpenSSL would otherwise match when
                // the certificate has no DNS name (a URI-only or CN-only
                // certificate of the same CA would pass as this server).
                _ = name.withCString {
                    SSL_ctrl(
                        ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, Int(TLSEXT_NAMETYPE_host_name),
                        UnsafeMutableRawPointer(mutating: $0))
                }
                SSL_set_hostflags(
                    ssl, UInt32(X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
                // A throw here frees `ssl` in deinit (every property is set).
                guard SSL_set1_host(ssl, name) == 1 else { throw TLSError("SSL_set1_host") }
            }
            SSL_set_connect_state(ssl)
        }
    }

    deinit { SSL_free(ssl) }

    var negotiatedProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportRead {
        ERR_clear_error()
        let count = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
        if count > 0 {
            needsWritable = false
            return .bytes(Int(count))
        }
        switch SSL_get_error(ssl, count) {
        case SSL_ERROR_WANT_READ: return .wouldBlock
        case SSL_ERROR_WANT_WRITE:
            needsWritable = true
            return .wouldBlock
        case SSL_ERROR_ZERO_RETURN: return .endOfStream
        default: return .failed(TLSError("SSL_read"))
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> TransportWrite {
        guard !bytes.isEmpty else { return .wrote(0) }
        ERR_clear_error()
        let count = SSL_write(ssl, bytes.baseAddress, Int32(bytes.count))
        if count > 0 {
            needsWritable = false
            return .wrote(Int(count))
        }
        switch SSL_get_error(ssl, count) {
        case SSL_ERROR_WANT_READ:
            needsWritable = false
            return .wouldBlock
        case SSL_ERROR_WANT_WRITE:
            needsWritable = true
            return .wouldBlock
        default: return .failed(TLSError("SSL_write"))
        }
    }

    /// Where an explicit handshake step left off.
    enum HandshakeStep {
        case complete
        case wantsReadable
        case wantsWritable
        case failed(TLSError)
    }

    /// Drives the handshake as far as the socket allows now.
    func handshake() -> HandshakeStep {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            needsWritable = false
            return .complete
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ:
            needsWritable = false
            return .wantsReadable
        case SSL_ERROR_WANT_WRITE:
            needsWritable = true
            return .wantsWritable
        default:
            return .failed(TLSError("SSL_do_handshake"))
        }
    }

    /// Why the peer's certificate was refused, when it was (clients only
    /// verify): OpenSSL's text for the verify result, e.g. "hostname mismatch".
    var verificationFailure: String? {
        let result = SSL_get_verify_result(ssl)
        guard result != Int(X509_V_OK) else { return nil }
        guard let text = X509_verify_cert_error_string(result) else { return "verify error \(result)" }
        return String(cString: text)
    }

    /// The verified client certificate's names (server side with a client
    /// CA); nil before the handshake finished or without a certificate.
    /// Read once per connection.
    var peerIdentity: PeerIdentity? {
        if let peerIdentityRead { return peerIdentityRead }
        guard SSL_is_init_finished(ssl) == 1 else { return nil }
        let identity = PeerCertificateReader.identity(of: ssl)
        peerIdentityRead = .some(identity)
        return identity
    }

    /// Decrypted bytes OpenSSL holds that no readiness event will announce.
    var bufferedByteCount: Int { Int(SSL_pending(ssl)) }

    /// Sends close_notify, best effort (never waits for the peer's).
    func sendCloseNotify() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }
}
