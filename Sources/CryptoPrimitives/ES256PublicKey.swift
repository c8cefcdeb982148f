import COpenSSL

/// An ES256 verification key: a P-256 public key read from a PEM
/// `PUBLIC KEY`, SubjectPublicKeyInfo DER or the raw uncompressed point
/// (a JWK's x and y). Verification computes the SHA-256 digest once and
/// checks it with a verify context kept per key and reused, so a hot key
/// (an App Store leaf certificate, the identity provider's key) costs no
/// per-call set-up. High-S signatures are valid (Apple does not normalise
/// s). Immutable and safe to share between threads.
public final class ES256PublicKey: Sendable {
    /// The length of a raw r||s signature.
    public static let signatureBytes = 64
    /// The length of an uncompressed point: 0x04, X, Y.
    public static let rawPointBytes = 65

    private let handle: PKeyHandle
    private let contexts: VerifyContextPool

    /// Reads SubjectPublicKeyInfo DER; throws `.notP256` for another curve.
    public init(spkiDER der: [UInt8]) throws(CryptoError) {
        let handle = try PKeyHandle.publicKey(spkiDER: der)
        guard try handle.curve() == .p256 else { throw .notP256 }
        self.handle = handle
        self.contexts = VerifyContextPool(key: handle)
    }

    /// Reads the one `PUBLIC KEY` block of a PEM text.
    public convenience init(pem text: some Collection<UInt8>) throws(CryptoError) {
        let block: PEMBlock
        do {
            block = try PEMBlock.single(labelled: "PUBLIC KEY", in: text)
        } catch {
            throw .malformedKey
        }
        try self.init(spkiDER: block.der)
    }

    /// Reads an uncompressed P-256 point (0x04 || X || Y, 65 bytes), as a
    /// JWK's `x` and `y` give it. OpenSSL refuses points not on the curve.
    public convenience init(rawPoint: [UInt8]) throws(CryptoError) {
        guard rawPoint.count == Self.rawPointBytes, rawPoint[0] == 0x04 else { throw .malformedKey }
        try self.init(spkiDER: Self.p256SPKIPrefix + rawPoint)
    }

    /// DER of SubjectPublicKeyInfo { id-ecPublicKey, prime256v1 } up to the
    /// BIT STRING holding the 65-byte point (RFC 5480).
    private static let p256SPKIPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
        0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    /// SubjectPublicKeyInfo DER.
    public var spkiDER: [UInt8] {
        // Encoding a public key that decoded fails only when memory runs out.
        guard let der = try? handle.spkiDER() else { preconditionFailure("i2d_PUBKEY failed") }
        return der
    }

    /// The key as a PEM `PUBLIC KEY` block: public, fine to share.
    public var pem: String { PEMBlock(label: "PUBLIC KEY", der: spkiDER).text }

    /// The uncompressed point 0x04 || X || Y.
    public var rawPoint: [UInt8] { Array(spkiDER.suffix(Self.rawPointBytes)) }

    /// Whether `signature`, JOSE's raw r||s (32 + 32 bytes), is this key's
    /// ES256 signature over `message`.
    public func isValidSignature(_ signature: [UInt8], for message: some Collection<UInt8>) -> Bool {
        guard signature.count == Self.signatureBytes,
            let der = try? ECDSASignatureEncoding.der(fromRaw: signature)
        else { return false }
        return verify(derSignature: der, message: message)
    }

    /// Whether `signature`, a DER ECDSA-Sig-Value, is this key's ECDSA
    /// signature with SHA-256 over `message` (X.509 and OpenSSL's form).
    public func isValidDERSignature(_ signature: [UInt8], for message: some Collection<UInt8>) -> Bool {
        guard !signature.isEmpty, signature.count <= 2 * Self.signatureBytes + 8 else { return false }
        return verify(derSignature: signature, message: message)
    }

    private func verify(derSignature: [UInt8], message: some Collection<UInt8>) -> Bool {
        let digest = SHA256.hash(message)
        return contexts.withContext { context in
            EVP_PKEY_verify(context, derSignature, derSignature.count, digest, digest.count) == 1
        }
    }
}
