/// A server-side TLS context (certificate chain, key, ALPN preference) for
/// connections accepted by code outside RPCRuntime, e.g. the Gateway's
/// public port: `ConnectedSocket.startServerTLS(_:)` wraps an accepted
/// socket in it. Immutable once made; share one across connections.
public final class TLSServerContext: Sendable {
    let context: TLSContext
    /// The ALPN protocols offered, in order of preference.
    public let alpnProtocols: [String]

    /// Loads the PEM chain and key of `configuration`; ALPN selects the
    /// first of `alpnProtocols` the client offers (none in common or no
    /// ALPN from the client: the handshake proceeds without a protocol).
    public init(configuration: TLSConfiguration, alpnProtocols: [String]) throws {
        context = try TLSContext(server: configuration, alpnProtocols: alpnProtocols)
        self.alpnProtocols = alpnProtocols
    }
}
