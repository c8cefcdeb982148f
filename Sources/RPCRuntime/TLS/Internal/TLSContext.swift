#if canImport(Glibc)
import Glibc
#endif
import COpenSSL

/// Owns one `SSL_CTX` (freed in deinit). Servers select ALPN "h2" only,
/// unless made with a list of protocols (then the first of ours the client
/// offers wins, and a client offering none of them gets no ALPN).
final class TLSContext: @unchecked Sendable {
    let context: OpaquePointer
    let isServer: Bool
    let serverName: String?
    /// The server's ALPN list for the selection callback (see
    /// `alpnSelectPreferred`); freed in deinit, after the `SSL_CTX`.
    private var alpnArgument: UnsafeMutableBufferPointer<UInt8>?

    /// A server context selecting the first of `alpnProtocols` (our order
    /// of preference) that the client offers.
    convenience init(server configuration: TLSConfiguration, alpnProtocols: [String]) throws {
        try self.init(server: configuration)
        var wire: [UInt8] = []
        for name in alpnProtocols {
            let bytes = Array(name.utf8)
            precondition(!bytes.isEmpty && bytes.count < 256, "ALPN protocol names are 1...255 bytes")
            wire.append(UInt8(bytes.count))
            wire.append(contentsOf: bytes)
        }
        precondition(wire.count <= Int(UInt16.max), "ALPN list too long")
        let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 2 + wire.count)
        _ = storage.initialize(from: [UInt8(wire.count & 0xff), UInt8(wire.count >> 8)] + wire)
        alpnArgument = storage
        SSL_CTX_set_alpn_select_cb(context, alpnSelectPreferred, UnsafeMutableRawPointer(storage.baseAddress))
    }

    init(server configuration: TLSConfiguration) throws {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw TLSError("SSL_CTX_new") }
        self.context = context
        self.isServer = true
        self.serverName = nil
        try configureCommon()
        guard let chain = configuration.certificateChainPath, let key = configuration.privateKeyPath else {
            throw TLSError("server TLS needs a certificate chain and a private key")
        }
        guard SSL_CTX_use_certificate_chain_file(context, chain) == 1 else { throw TLSError("certificate chain") }
        guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1 else { throw TLSError("private key") }
        guard SSL_CTX_check_private_key(context) == 1 else { throw TLSError("key does not match certificate") }
        if let clientRoots = configuration.clientCertificateTrustRootsPath {
            try verifyClientCertificates(trustRootsPath: clientRoots)
        }
        SSL_CTX_set_alpn_select_cb(context, alpnSelectH2, nil)
    }

    init(client configuration: TLSConfiguration) throws {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw TLSError("SSL_CTX_new") }
        self.context = context
        self.isServer = false
        self.serverName = configuration.serverName
        try configureCommon()
        if let roots = configuration.trustRootsPath {
            guard SSL_CTX_load_verify_locations(context, roots, nil) == 1 else { throw TLSError("trust roots") }
        } else {
            SSL_CTX_set_default_verify_paths(context)
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if let chain = configuration.certificateChainPath, let key = configuration.privateKeyPath {
            try presentCertificate(chainPath: chain, privateKeyPath: key)
        } else if configuration.certificateChainPath != nil || configuration.privateKeyPath != nil {
            throw TLSError("a client certificate needs both a chain and a private key")
        }
        let protocols: [UInt8] = [2, UInt8(ascii: "h"), UInt8(ascii: "2")]
        guard SSL_CTX_set_alpn_protos(context, protocols, UInt32(protocols.count)) == 0 else { throw TLSError("ALPN") }
    }

    private func configureCommon() throws {
        // The macros SSL_CTX_set_min_proto_version / SSL_CTX_set_mode expand to SSL_CTX_ctrl.
        guard SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(TLS1_2_VERSION), nil) == 1 else {
            throw TLSError("minimum TLS version")
        }
        // Our write buffer may move between retries and we accept partial writes.
        _ = SSL_CTX_ctrl(
            context, SSL_CTRL_MODE, Int(SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER), nil)
    }

    deinit {
        SSL_CTX_free(context)
        alpnArgument?.deallocate()
    }
}

/// ALPN: the first protocol of the server's list that the client offers;
/// none in common means no ALPN (the connection goes on without it). The
/// callback argument is the server's list: a 2-byte little-endian length,
/// then the list in wire format (length-prefixed names).
private let alpnSelectPreferred:
    @convention(c) (
        OpaquePointer?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, UnsafeMutablePointer<UInt8>?,
        UnsafePointer<UInt8>?, UInt32, UnsafeMutableRawPointer?
    ) -> Int32 = { _, out, outLength, input, inputLength, argument in
        guard let input, let out, let outLength, let argument else { return SSL_TLSEXT_ERR_NOACK }
        let header = argument.assumingMemoryBound(to: UInt8.self)
        let ours = UnsafeBufferPointer(start: header + 2, count: Int(header[0]) | Int(header[1]) << 8)
        let offered = UnsafeBufferPointer(start: input, count: Int(inputLength))
        var ourIndex = 0
        while ourIndex < ours.count {
            let ourLength = Int(ours[ourIndex])
            guard ourIndex + 1 + ourLength <= ours.count else { break }
            let name = ours[(ourIndex + 1)..<(ourIndex + 1 + ourLength)]
            var index = 0
            while index < offered.count {
                let length = Int(offered[index])
                guard index + 1 + length <= offered.count else { break }
                if length == ourLength && offered[(index + 1)..<(index + 1 + length)].elementsEqual(name) {
                    out.pointee = input + index + 1
                    outLength.pointee = UInt8(length)
                    return SSL_TLSEXT_ERR_OK
                }
                index += 1 + length
            }
            ourIndex += 1 + ourLength
        }
        return SSL_TLSEXT_ERR_NOACK
    }

/// ALPN: choose "h2" or fail the handshake (gRPC needs HTTP/2).
private let alpnSelectH2:
    @convention(c) (
        OpaquePointer?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, UnsafeMutablePointer<UInt8>?,
        UnsafePointer<UInt8>?, UInt32, UnsafeMutableRawPointer?
    ) -> Int32 = { _, out, outLength, input, inputLength, _ in
        guard let input, let out, let outLength else { return SSL_TLSEXT_ERR_ALERT_FATAL }
        var index = 0
        while index < Int(inputLength) {
            let length = Int(input[index])
            if length == 2, index + 2 < Int(inputLength) + 0, input[index + 1] == UInt8(ascii: "h"),
                input[index + 2] == UInt8(ascii: "2")
            {
                out.pointee = input + index + 1
                outLength.pointee = 2
                return SSL_TLSEXT_ERR_OK
            }
            index += 1 + length
        }
        return SSL_TLSEXT_ERR_ALERT_FATAL
    }
