/// Why the JWT settings cannot be used; raised at start-up, never per request.
public enum JWTConfigurationError: Error, Sendable, Equatable {
    case missingVariable(String)
    /// RFC 7518 §3.2: an HS256 key must be at least 32 bytes.
    case secretTooShort
    /// The PEM is not an EC P-256 public key (the reason, without key bytes).
    case invalidPublicKey(String)
    /// Neither JWT_HS256_SECRET nor JWT_ES256_PUBLIC_KEY is set.
    case noKeyConfigured
    case unreadableFile(path: String)
}
