/// An ES256 (ECDSA on P-256 with SHA-256, RFC 7518 section 3.4) signing
/// key: an App Store Connect .p8 read from PKCS#8 PEM, or a generated one
/// (tests, local tools). Signatures are JOSE's raw r||s (32 + 32 bytes),
/// not DER. The key never appears in descriptions, debug output or
/// reflection, so it cannot reach a log by accident. Immutable; signing
/// from many threads is safe.
public final class ES256SigningKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The private key (P-256).
    public let privateKey: ECPrivateKey
    /// The public half, for verifying and for sharing.
    public let publicKey: ES256PublicKey

    /// Uses `privateKey`, which must be on P-256.
    public init(privateKey: ECPrivateKey) throws(CryptoError) {
        guard privateKey.curve == .p256 else { throw .notP256 }
        self.privateKey = privateKey
        self.publicKey = try ES256PublicKey(spkiDER: privateKey.publicKeySPKIDER())
    }

    /// Reads one `-----BEGIN PRIVATE KEY-----` block (unencrypted PKCS#8)
    /// holding an EC key on P-256, as App Store Connect's .p8 files do.
    public convenience init(pkcs8PEM text: some Collection<UInt8>) throws(CryptoError) {
        try self.init(privateKey: ECPrivateKey(pkcs8PEM: text))
    }

    /// A fresh random P-256 key.
    public convenience init() throws(CryptoError) {
        try self.init(privateKey: ECPrivateKey(generating: .p256))
    }

    /// Signs `message` (SHA-256, ECDSA, randomised) and returns raw r||s, 64 bytes.
    public func sign(_ message: some Collection<UInt8>) throws(CryptoError) -> [UInt8] {
        let der = try ECDSASigner.signDER(message, with: privateKey.handle)
        do {
            return try ECDSASignatureEncoding.raw(fromDER: der, halfBytes: ECCurve.p256.coordinateBytes)
        } catch {
            throw .signingFailed
        }
    }

    /// Whether `signature` (raw r||s) is this key's ES256 signature over `message`.
    public func isValidSignature(_ signature: [UInt8], for message: some Collection<UInt8>) -> Bool {
        publicKey.isValidSignature(signature, for: message)
    }

    /// The public half as a PEM `PUBLIC KEY` (SubjectPublicKeyInfo), which
    /// may be shared: it is what Apple or a token's verifier holds.
    public var publicKeyPEM: String { publicKey.pem }

    public var description: String { "ES256SigningKey(redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}
