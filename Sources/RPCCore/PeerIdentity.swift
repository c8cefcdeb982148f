/// Who the caller proved to be in the TLS handshake: the names of a client
/// certificate that the server verified against its client CA
/// (`TLSConfiguration.clientCertificateTrustRootsPath`). Plain values, no
/// OpenSSL types; nil in `ServerContext` when the call came without TLS or
/// without a client certificate.
public struct PeerIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The certificate's subjectAltName DNS names, lower-cased, in order.
    public var dnsNames: [String]
    /// The certificate's subjectAltName URIs, in order.
    public var uris: [String]
    /// The subject's common name, for logs only: it is never an identity.
    public var commonName: String?

    public init(dnsNames: [String], uris: [String] = [], commonName: String? = nil) {
        self.dnsNames = dnsNames
        self.uris = uris
        self.commonName = commonName
    }

    /// The names authorisation matches against, exactly: the DNS names and
    /// URIs of subjectAltName. The common name is left out on purpose (as
    /// host name verification leaves it out, RFC 6125): a certificate whose
    /// identity is only a CN has none here and is authorised for nothing
    /// that names callers.
    public var names: [String] { dnsNames + uris }

    /// Whether the certificate names `identity` as configured
    /// (`CallerPolicy.identity`): an identity with a `:` is a URI and is
    /// matched against the URIs only, any other against the DNS names only.
    /// A `URI:payments` or a `DNS:spiffe://...` name therefore never passes
    /// for the other kind, where a CA restricts one kind and not the other.
    public func names(_ identity: String) -> Bool {
        identity.contains(":") ? uris.contains(identity) : dnsNames.contains(identity)
    }

    public var description: String {
        names.isEmpty ? "(no subjectAltName; CN \(commonName ?? "none"))" : names.joined(separator: ",")
    }
}
