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
            guard hs256Secret.count >= HMACSHA256Key.secretBytesMin else { throw JWTConfigurationError.secretTooShort }
            self.hs256Secret = HMACSHA256Key(secret: hs256Secret)
        } else {
            self.hs256Secret = nil
        }
        self.es256PublicKey = try es256PublicKeyPEM.map { (pem) throws(JWTConfigurationError) in try ES256PublicKey(pem: pem) }
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
        case .hs256: return hs256Secret?.verify(message: signingInput, mac: signature) ?? false
        case .es256: return es256PublicKey?.verify(message: signingInput, rawSignature: signature) ?? false
        }
    }
}
