import CryptoPrimitives

/// The verification keys, at most one per algorithm. A token's `alg`
/// selects its key; an algorithm without a key is refused, so a public key
/// can never be misused as an HMAC secret (algorithm confusion).
public struct JWTKeySet: Sendable {
    let hs256Secret: HMACSHA256Key?
    let es256PublicKey: ES256PublicKey?

    /// - Parameters:
    ///   - hs256Secret: the shared secret bytes (at least 32), or nil.
    ///   - es256PublicKeyPEM: a PEM "PUBLIC KEY" for curve P-256, or nil.
    public init(hs256Secret: [UInt8]?, es256PublicKeyPEM: [UInt8]?) throws(JWTConfigurationError) {
        if hs256Secret == nil && es256PublicKeyPEM == nil { throw JWTConfigurationError.noKeyConfigured }
        if let hs256Secret {
            guard hs256Secret.count >= GatewayLimits.hmacSecretBytesMin else { throw JWTConfigurationError.secretTooShort }
            self.hs256Secret = HMACSHA256Key(secret: hs256Secret)
        } else {
            self.hs256Secret = nil
        }
        self.es256PublicKey = try es256PublicKeyPEM.map(Self.es256PublicKey(pem:))
    }

    /// The algorithms this set can verify.
    public var algorithms: Set<JWTAlgorithm> {
        var result: Set<JWTAlgorithm> = []
        if hs256Secret != nil { result.insert(.hs256) }
        if es256PublicKey != nil { result.insert(.es256) }
        return result
    }

    /// True when `signature` over `signingInput` is valid under `algorithm`'s
    /// key; false for a bad signature or an algorithm without a key.
    func verify(algorithm: JWTAlgorithm, signingInput: [UInt8], signature: [UInt8]) -> Bool {
        switch algorithm {
        case .hs256: return hs256Secret?.isValidAuthenticationCode(signature, for: signingInput) ?? false
        case .es256: return es256PublicKey?.isValidSignature(signature, for: signingInput) ?? false
        }
    }

    /// A PEM "PUBLIC KEY" on P-256; the error says why not, without key bytes.
    private static func es256PublicKey(pem: [UInt8]) throws(JWTConfigurationError) -> ES256PublicKey {
        do {
            return try ES256PublicKey(pem: pem)
        } catch .notP256, .notEC, .unsupportedCurve {
            throw .invalidPublicKey("not an EC P-256 key")
        } catch {
            throw .invalidPublicKey("not a PEM public key")
        }
    }
}
