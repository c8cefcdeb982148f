import CryptoPrimitives

/// The verification keys: one HS256 secret, and one or more ES256 public
/// keys (tried in turn, so an issuer rotating its signing key is accepted
/// with both keys in the bundle while tokens of either are alive). A
/// token's `alg` selects its keys; an algorithm without a key is refused,
/// so a public key can never be misused as an HMAC secret (algorithm
/// confusion).
public struct JWTKeySet: Sendable {
    let hs256Secret: HMACSHA256Key?
    let es256PublicKeys: [ES256PublicKey]

    /// - Parameters:
    ///   - hs256Secret: the shared secret bytes (at least 32), or nil.
    ///   - es256PublicKeyPEM: one or more PEM "PUBLIC KEY" blocks for curve
    ///     P-256 (at most `GatewayLimits.es256PublicKeysMax`), or nil.
    public init(hs256Secret: [UInt8]?, es256PublicKeyPEM: [UInt8]?) throws(JWTConfigurationError) {
        if hs256Secret == nil && es256PublicKeyPEM == nil { throw JWTConfigurationError.noKeyConfigured }
        if let hs256Secret {
            guard hs256Secret.count >= GatewayLimits.hmacSecretBytesMin else {
                throw JWTConfigurationError.secretTooShort
            }
            self.hs256Secret = HMACSHA256Key(secret: hs256Secret)
        } else {
            self.hs256Secret = nil
        }
        es256PublicKeys = try es256PublicKeyPEM.map(Self.es256PublicKeys(pem:)) ?? []
    }

    /// The algorithms this set can verify.
    public var algorithms: Set<JWTAlgorithm> {
        var result: Set<JWTAlgorithm> = []
        if hs256Secret != nil { result.insert(.hs256) }
        if !es256PublicKeys.isEmpty { result.insert(.es256) }
        return result
    }

    /// True when `signature` over `signingInput` is valid under `algorithm`'s
    /// key; false for a bad signature or an algorithm without a key.
    func verify(algorithm: JWTAlgorithm, signingInput: [UInt8], signature: [UInt8]) -> Bool {
        switch algorithm {
        case .hs256: return hs256Secret?.isValidAuthenticationCode(signature, for: signingInput) ?? false
        case .es256: return es256PublicKeys.contains { $0.isValidSignature(signature, for: signingInput) }
        }
    }

    /// The "PUBLIC KEY" blocks of a PEM bundle (other blocks and text
    /// between them ignored), each on P-256, at most
    /// `GatewayLimits.es256PublicKeysMax`; the error says why not, without
    /// key bytes.
    private static func es256PublicKeys(pem: [UInt8]) throws(JWTConfigurationError) -> [ES256PublicKey] {
        let blocks: [PEMBlock]
        do {
            blocks = try PEMBlock.blocks(in: pem).filter { $0.label == "PUBLIC KEY" }
        } catch {
            throw .invalidPublicKey("not a PEM public key")
        }
        guard !blocks.isEmpty else { throw .invalidPublicKey("not a PEM public key") }
        guard blocks.count <= GatewayLimits.es256PublicKeysMax else {
            throw .invalidPublicKey("more than \(GatewayLimits.es256PublicKeysMax) keys")
        }
        var keys: [ES256PublicKey] = []
        for block in blocks {
            do {
                keys.append(try ES256PublicKey(spkiDER: block.der))
            } catch .notP256, .notEC, .unsupportedCurve {
                throw .invalidPublicKey("not an EC P-256 key")
            } catch {
                throw .invalidPublicKey("not a PEM public key")
            }
        }
        return keys
    }
}
