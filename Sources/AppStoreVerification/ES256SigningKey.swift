import COpenSSL

/// An ES256 (ECDSA P-256, SHA-256) private key read from a PKCS#8 PEM, the
/// form of an App Store Connect API key (`.p8`), for signing JWTs. Signatures
/// are JOSE's raw r||s (32 + 32 bytes), not DER. The key never appears in
/// descriptions, debug output or reflection, so it cannot reach a log by
/// accident. Immutable; signing with one key from many threads is safe
/// (OpenSSL 3 allows it for a key nobody mutates), hence `@unchecked Sendable`.
public final class ES256SigningKey: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let key: SigningKey
    private let publicKey: PublicKey

    /// Reads one `-----BEGIN PRIVATE KEY-----` block (unencrypted PKCS#8)
    /// holding an EC key on P-256. The PEM is decoded here, never handed to
    /// OpenSSL's PEM reader, so no passphrase prompt can ever block.
    public init(pkcs8PEM: [UInt8]) throws(ES256KeyError) {
        guard pkcs8PEM.count <= Self.pemBytesMax, let text = String(validating: pkcs8PEM, as: UTF8.self) else {
            throw .notPEM
        }
        let der = try Self.pkcs8DER(fromPEM: text)
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
        }
        guard let parsed else {
            ERR_clear_error()
            throw .malformed
        }
        key = SigningKey(owning: parsed)
        // The verifier shares the EVP_PKEY (a second reference, freed by it).
        EVP_PKEY_up_ref(parsed)
        publicKey = PublicKey(owning: parsed)
        guard publicKey.isP256 else { throw .notP256 }
    }

    /// A .p8 is a few hundred bytes; anything far larger is not one.
    static let pemBytesMax = 16 * 1024

    private static func pkcs8DER(fromPEM text: String) throws(ES256KeyError) -> [UInt8] {
        let begin = "-----BEGIN PRIVATE KEY-----", end = "-----END PRIVATE KEY-----"
        if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") { throw .encrypted }
        guard let beginRange = text.range(of: begin) else {
            throw text.contains("-----BEGIN ") ? .notPKCS8 : .notPEM
        }
        guard let endRange = text.range(of: end, range: beginRange.upperBound..<text.endIndex) else { throw .notPEM }
        let body = text[beginRange.upperBound..<endRange.lowerBound].filter { !$0.isWhitespace }
        guard let der = StrictBase64.decodeStandard(Array(body.utf8)), !der.isEmpty else { throw .malformed }
        return der
    }

    /// Signs `message` (SHA-256, ECDSA) and returns raw r||s, 64 bytes.
    public func sign(_ message: [UInt8]) throws(ES256KeyError) -> [UInt8] {
        guard let signature = key.signES256(message) else {
            ERR_clear_error()
            throw .signingFailed
        }
        return signature
    }

    /// Whether `signature` (raw r||s) is this key's ES256 signature over `message`.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        publicKey.verifyES256(message: message, rawSignature: signature)
    }

    /// The public half as a PEM `PUBLIC KEY` (SubjectPublicKeyInfo), which
    /// may be shared: it is what Apple holds to check the JWTs.
    public var publicKeyPEM: String {
        var output: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_PUBKEY(key.pointer, &output)
        guard length > 0, let output else { return "" }
        defer { CIAP_OPENSSL_free(output) }
        let base64 = StrictBase64.encodeStandard(UnsafeBufferPointer(start: output, count: Int(length)))
        var lines = ["-----BEGIN PUBLIC KEY-----"]
        var index = base64.startIndex
        while index < base64.endIndex {
            let next = base64.index(index, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
            lines.append(String(base64[index..<next]))
            index = next
        }
        lines.append("-----END PUBLIC KEY-----")
        return lines.joined(separator: "\n") + "\n"
    }

    public var description: String { "ES256SigningKey(redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}

/// Why a PKCS#8 PEM is not a usable ES256 key. Never carries key material.
public enum ES256KeyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not PEM text at all (or far too large to be a key).
    case notPEM
    /// PEM, but not a `PRIVATE KEY` (PKCS#8) block, e.g. a certificate or
    /// a SEC1 `EC PRIVATE KEY`.
    case notPKCS8
    /// An `ENCRYPTED PRIVATE KEY`: App Store Connect keys are not encrypted.
    case encrypted
    /// The block does not decode to a private key.
    case malformed
    /// A private key, but not EC on P-256.
    case notP256
    case signingFailed

    public var description: String {
        switch self {
        case .notPEM: "not a PEM private key (expected -----BEGIN PRIVATE KEY-----)"
        case .notPKCS8: "not a PKCS#8 private key (expected -----BEGIN PRIVATE KEY-----, as App Store Connect's .p8)"
        case .encrypted: "an encrypted private key (App Store Connect keys are unencrypted PKCS#8)"
        case .malformed: "the PRIVATE KEY block does not decode to a private key"
        case .notP256: "not an EC key on P-256 (ES256 needs P-256)"
        case .signingFailed: "ES256 signing failed"
        }
    }
}
