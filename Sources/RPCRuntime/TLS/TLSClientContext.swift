/// A client-side TLS context for connections made outside RPCRuntime's own
/// client (e.g. the App Store Server API client): verifies the server's
/// chain against a CA bundle (or the system trust store) and its host name
/// against `serverName`, sends SNI, and offers ALPN "h2". Immutable once
/// made; share one across connections to the same host.
/// `ConnectedSocket.startClientTLS(_:)` wraps a connected socket in it.
public final class TLSClientContext: Sendable {
    let context: TLSContext
    /// The host name checked in the certificate and sent in SNI.
    public let serverName: String

    /// `trustRootsPath`: a PEM CA bundle, or nil for the system store.
    /// `serverName` must not be empty: a client context never skips the
    /// host name check.
    public init(trustRootsPath: String?, serverName: String) throws {
        guard !serverName.isEmpty else { throw TLSError("client TLS needs a server name to verify") }
        context = try TLSContext(client: TLSConfiguration(trustRootsPath: trustRootsPath, serverName: serverName))
        self.serverName = serverName
    }
}
