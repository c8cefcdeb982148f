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
            guard hs256Secret.count >= GatewayLimits.hmacSecretBytesMin else { throw JWTConfigurationError.secretTooShort }
            self.hs256Secret = HMACSHA256Key(secret: hs256Secret)
        } else {
            self.hs256Secret = nil
        }
        if let es256PublicKeyPEM {
            let blocks = Self.publicKeyBlocks(in: es256PublicKeyPEM)
            guard blocks.count <= GatewayLimits.es256PublicKeysMax else {
                throw .invalidPublicKey("more than \(GatewayLimits.es256PublicKeysMax) keys")
            }
            // No block found: the whole file, for the parser's own error.
            var keys: [ES256PublicKey] = []
            for block in blocks.isEmpty ? [es256PublicKeyPEM] : blocks { keys.append(try Self.es256PublicKey(pem: block)) }
            es256PublicKeys = keys
        } else {
            es256PublicKeys = []
        }
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

    /// Each "-----BEGIN PUBLIC KEY-----" ... "-----END PUBLIC KEY-----"
    /// block of a PEM bundle, in order (text around them is ignored).
    static func publicKeyBlocks(in pem: [UInt8]) -> [[UInt8]] {
        let begin = Array("-----BEGIN PUBLIC KEY-----".utf8)
        let end = Array("-----END PUBLIC KEY-----".utf8)
        var blocks: [[UInt8]] = []
        var searchFrom = pem.startIndex
        while let start = pem[searchFrom...].firstRange(of: begin)?.lowerBound,
              let finish = pem[start...].firstRange(of: end)?.upperBound {
            blocks.append(Array(pem[start..<finish]) + [UInt8(ascii: "\n")])
            searchFrom = finish
        }
        return blocks
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
