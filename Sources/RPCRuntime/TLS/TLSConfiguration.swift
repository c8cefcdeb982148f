/// TLS settings. Servers present a certificate chain and key (PEM files) and
/// negotiate ALPN "h2"; clients verify the server against a CA bundle.
public struct TLSConfiguration: Sendable, Hashable {
    /// PEM certificate chain (server) or nil (client).
    public var certificateChainPath: String?
    /// PEM private key matching the chain (server).
    public var privateKeyPath: String?
    /// PEM CA bundle used to verify the peer (client); nil uses the system store.
    public var trustRootsPath: String?
    /// Server name sent in SNI and checked in the certificate (client).
    public var serverName: String?

    public init(certificateChainPath: String? = nil, privateKeyPath: String? = nil,
                trustRootsPath: String? = nil, serverName: String? = nil) {
        self.certificateChainPath = certificateChainPath
        self.privateKeyPath = privateKeyPath
        self.trustRootsPath = trustRootsPath
        self.serverName = serverName
    }

    /// A server configuration.
    public static func server(certificateChainPath: String, privateKeyPath: String) -> TLSConfiguration {
        TLSConfiguration(certificateChainPath: certificateChainPath, privateKeyPath: privateKeyPath)
    }
}
