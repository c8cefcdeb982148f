/// The JWS algorithms the gateway accepts (RFC 7518 names).
public enum JWTAlgorithm: String, Sendable, CaseIterable {
    /// HMAC-SHA256 with the shared secret JWT_HS256_SECRET.
    case hs256 = "HS256"
    /// ECDSA P-256 with SHA-256; signature is raw r||s (64 bytes).
    case es256 = "ES256"
}
