import COpenSSL

/// Mutual TLS on a context: a server asking callers for certificates issued
/// by a client CA, and a client presenting its own.
extension TLSContext {
    /// How long a client's chain may be (leaf, intermediates, root).
    static let clientChainDepthMax: Int32 = 4

    /// Server: asks every caller for a certificate and verifies one it gets
    /// against the PEM bundle at `path` (a bad or untrusted one, or one
    /// without the clientAuth purpose, fails the handshake). A caller that
    /// sends none is let through without an identity: the authorisation
    /// layer answers it UNAUTHENTICATED as a gRPC status, and health checks
    /// stay open to probes without certificates.
    func verifyClientCertificates(trustRootsPath path: String) throws {
        guard SSL_CTX_load_verify_locations(context, path, nil) == 1 else { throw TLSError("client CA \(path)") }
        // The CA names sent in the certificate request; the SSL_CTX owns the list from here on.
        guard let names = SSL_load_client_CA_file(path) else { throw TLSError("client CA names \(path)") }
        SSL_CTX_set_client_CA_list(context, names)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        SSL_CTX_set_verify_depth(context, Self.clientChainDepthMax)
        // Resuming a session restores its verified client certificate; without
        // a session id context OpenSSL refuses every resumption attempt.
        let sessionContext = Array("iap-credits-rpc".utf8)
        guard SSL_CTX_set_session_id_context(context, sessionContext, UInt32(sessionContext.count)) == 1 else {
            throw TLSError("session id context")
        }
    }

    /// Client: presents the PEM chain and key (mutual TLS).
    func presentCertificate(chainPath: String, privateKeyPath: String) throws {
        guard SSL_CTX_use_certificate_chain_file(context, chainPath) == 1 else {
            throw TLSError("client certificate chain")
        }
        guard SSL_CTX_use_PrivateKey_file(context, privateKeyPath, SSL_FILETYPE_PEM) == 1 else {
            throw TLSError("client private key")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw TLSError("client key does not match its certificate")
        }
    }
}
