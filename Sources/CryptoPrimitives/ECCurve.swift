/// The elliptic curves the primitives handle: P-256 for ES256 and for
/// App Store signing certificates, P-384 for certificate authorities.
public enum ECCurve: String, Sendable, CaseIterable {
    case p256 = "P-256"
    case p384 = "P-384"

    /// Bytes of one coordinate or one half of an ECDSA signature.
    public var coordinateBytes: Int {
        switch self {
        case .p256: 32
        case .p384: 48
        }
    }

    /// The curve of an OpenSSL group name ("prime256v1" and "P-256" alike).
    init?(openSSLGroupName name: String) {
        switch name {
        case "prime256v1", "P-256", "secp256r1": self = .p256
        case "secp384r1", "P-384": self = .p384
        default: return nil
        }
    }
}
