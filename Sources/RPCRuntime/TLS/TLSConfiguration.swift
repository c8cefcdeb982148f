/// TLS settings. Servers present a certificate chain and key (PEM files) and
/// negotiate ALPN "h2"; clients verify the server against a CA bundle. Either
/// side may authenticate the other: a server given a client CA asks every
/// caller for a certificate, and a client given a chain and key presents it.
public struct TLSConfiguration: Sendable, Hashable {
    /// PEM certificate chain: the server's, or the client's identity (mutual TLS); nil for a client without one.
    public var certificateChainPath: String?
    /// PEM private key matching the chain.
    public var privateKeyPath: String?
    /// PEM CA bundle used to verify the server (client); nil uses the system store.
    public var trustRootsPath: String?
    /// Server name sent in SNI and checked in the certificate (client).
    public var serverName: String?
    /// PEM CA bundle of client certificates (server): when set, the server
    /// asks each caller for a certificate and verifies one it gets against
    /// this bundle (a bad one fails the handshake); a caller without one is
    /// let through with no `PeerIdentity`, for the authorisation layer to
    /// answer UNAUTHENTICATED. Nil: no client certificates are asked for.
    public var clientCertificateTrustRootsPath: String?

    public init(
        certificateChainPath: String? = nil, privateKeyPath: String? = nil,
        trustRootsPath: String? = nil, serverName: String? = nil, clientCertificateTrustRootsPath: String? = nil
    ) {
        self.certificateChainPath = certificateChainPath
        self.privateKeyPath = privateKeyPath
        self.trustRootsPath = trustRootsPath
        self.serverName = serverName
        self.clientCertificateTrustRootsPath = clientCertificateTrustRootsPath
    }

    /// A server configuration; with `clientCertificateTrustRootsPath`, mutual TLS.
    public static func server(
        certificateChainPath: String, privateKeyPath: String,
        clientCertificateTrustRootsPath: String? = nil
    ) -> TLSConfiguration {
        TLSConfiguration(
            certificateChainPath: certificateChainPath, privateKeyPath: privateKeyPath,
            clientCertificateTrustRootsPath: clientCertificateTrustRootsPath)
    }

    /// A client configuration verifying the server against `trustRootsPath`
    /// and `serverName`; with a chain and key, it presents them (mutual TLS).
    public static func client(
        trustRootsPath: String, serverName: String,
        certificateChainPath: String? = nil, privateKeyPath: String? = nil
    ) -> TLSConfiguration {
        TLSConfiguration(
            certificateChainPath: certificateChainPath, privateKeyPath: privateKeyPath,
            trustRootsPath: trustRootsPath, serverName: serverName)
    }
}
