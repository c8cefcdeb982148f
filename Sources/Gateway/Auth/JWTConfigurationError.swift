/// Why the JWT settings cannot be used; raised at start-up, never per request.
public enum JWTConfigurationError: Error, Sendable, Equatable {
    case missingVariable(String)
    /// RFC 7518 §3.2: an HS256 key must be at least 32 bytes.
    case secretTooShort
    /// EMAIL_HASH_SECRET, an HMAC-SHA256 key too, must be at least 32 bytes.
    case emailHashSecretTooShort
    /// The PEM is not an EC P-256 public key (the reason, without key bytes).
    case invalidPublicKey(String)
    /// Neither JWT_HS256_SECRET nor JWT_ES256_PUBLIC_KEY is set.
    case noKeyConfigured
    case unreadableFile(path: String)
}

extension JWTConfigurationError: CustomStringConvertible {
    /// A sentence naming the setting at fault (never its value).
    public var description: String {
        switch self {
        case .missingVariable(let name): "\(name) is required but not set"
        case .secretTooShort:
            "JWT_HS256_SECRET must be at least \(GatewayLimits.hmacSecretBytesMin) bytes (RFC 7518 section 3.2)"
        case .emailHashSecretTooShort: "EMAIL_HASH_SECRET must be at least \(GatewayLimits.hmacSecretBytesMin) bytes"
        case .invalidPublicKey(let reason): "JWT_ES256_PUBLIC_KEY is not usable: \(reason)"
        case .noKeyConfigured:
            "set JWT_HS256_SECRET or JWT_ES256_PUBLIC_KEY: the gateway cannot verify bearer tokens without a key"
        case .unreadableFile(let path): "cannot read the key file \(path)"
        }
    }
}
