import COpenSSL

/// An elliptic-curve private key on P-256 or P-384, generated or read from
/// DER, for ES256 signing (`ES256SigningKey`) and for the certificates of a
/// local testing CA. The key never appears in descriptions, debug output or
/// reflection; only the explicit exports return it. Immutable, so it may be
/// used from many threads, hence `@unchecked Sendable`.
public final class ECPrivateKey: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    let handle: PKeyHandle
    /// The key's curve.
    public let curve: ECCurve

    /// A fresh random key on `curve`.
    public convenience init(generating curve: ECCurve) throws(CryptoError) {
        try self.init(handle: PKeyHandle.generate(curve))
    }

    /// Reads an unencrypted PKCS#8 PrivateKeyInfo (the body of a
    /// `PRIVATE KEY` PEM block, such as a .p8).
    public convenience init(pkcs8DER der: [UInt8]) throws(CryptoError) {
        try self.init(handle: PKeyHandle.privateKey(pkcs8DER: der))
    }

    /// Reads a SEC1 ECPrivateKey (RFC 5915, the body of an `EC PRIVATE KEY`
    /// PEM block).
    public convenience init(sec1DER der: [UInt8]) throws(CryptoError) {
        try self.init(handle: PKeyHandle.privateKey(sec1DER: der))
    }

    /// Reads the one `PRIVATE KEY` (PKCS#8) block of a PEM text, such as an
    /// App Store Connect .p8. The PEM is decoded here, never handed to
    /// OpenSSL's PEM reader, so no passphrase prompt can ever block.
    public convenience init(pkcs8PEM text: some Collection<UInt8>) throws(CryptoError) {
        let blocks: [PEMBlock]
        do {
            blocks = try PEMBlock.blocks(in: text, bytesMax: CryptoLimits.privateKeyPEMBytesMax)
        } catch {
            // A block that does not decode is judged by its label: what it claims to be.
            switch error {
            case .invalidBody(let label, _), .emptyBody(let label): throw Self.labelError(label) ?? .malformedKey
            default: throw .notPEM
            }
        }
        guard let block = blocks.first(where: { $0.label == "PRIVATE KEY" }) else {
            throw blocks.contains { $0.label == "ENCRYPTED PRIVATE KEY" } ? .encrypted : .notPKCS8
        }
        try self.init(pkcs8DER: block.der)
    }

    /// Why a block with `label` is not a .p8; nil for `PRIVATE KEY` itself.
    private static func labelError(_ label: String) -> CryptoError? {
        switch label {
        case "PRIVATE KEY": nil
        case "ENCRYPTED PRIVATE KEY": .encrypted
        default: .notPKCS8
        }
    }

    init(handle: PKeyHandle) throws(CryptoError) {
        self.handle = handle
        self.curve = try handle.curve()
    }

    /// The key as unencrypted PKCS#8 DER. Secret: for saving a generated
    /// key (tests, local tools), never for logs.
    public func pkcs8DER() throws(CryptoError) -> [UInt8] {
        guard let info = EVP_PKEY2PKCS8(handle.pointer) else {
            ERR_clear_error()
            throw .encodingFailed
        }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        return try PKeyHandle.encode { i2d_PKCS8_PRIV_KEY_INFO(info, $0) }
    }

    /// The key as a PEM `PRIVATE KEY` block, the form of a .p8. Secret, as `pkcs8DER()`.
    public func pkcs8PEM() throws(CryptoError) -> String {
        PEMBlock(label: "PRIVATE KEY", der: try pkcs8DER()).text
    }

    /// The key as SEC1 ECPrivateKey DER. Secret, as `pkcs8DER()`.
    public func sec1DER() throws(CryptoError) -> [UInt8] {
        try PKeyHandle.encode { i2d_PrivateKey(handle.pointer, $0) }
    }

    /// The public half as SubjectPublicKeyInfo DER.
    public func publicKeySPKIDER() throws(CryptoError) -> [UInt8] {
        try handle.spkiDER()
    }

    /// Runs `body` with the `EVP_PKEY*`, for the X.509 and OCSP code of this
    /// package that signs with the key. Do not let the pointer escape `body`.
    package func withUnsafeEVPPKEY<Result>(_ body: (OpaquePointer) throws -> Result) rethrows -> Result {
        try body(handle.pointer)
    }

    public var description: String { "ECPrivateKey(\(curve.rawValue), redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}
