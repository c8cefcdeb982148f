/// Why a key or signature cannot be used. Never carries key material or
/// the bytes that failed to parse, so it is safe to log and to show at start-up.
public enum CryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not a PEM private key at all (or far too large to be one).
    case notPEM
    /// PEM, but not a `PRIVATE KEY` (PKCS#8) block, e.g. a certificate or
    /// a SEC1 `EC PRIVATE KEY`.
    case notPKCS8
    /// An `ENCRYPTED PRIVATE KEY`: App Store Connect keys are not encrypted.
    case encrypted
    /// The bytes do not decode to a key of the expected form.
    case malformedKey
    /// A key, but not an elliptic-curve key.
    case notEC
    /// An EC key on a curve other than P-256 and P-384.
    case unsupportedCurve
    /// An EC key, but ES256 needs P-256.
    case notP256
    /// A DER or raw ECDSA signature that is not well formed.
    case malformedSignature
    /// OpenSSL could not generate a key.
    case keyGenerationFailed
    /// OpenSSL could not sign.
    case signingFailed
    /// OpenSSL could not encode a key.
    case encodingFailed

    public var description: String {
        switch self {
        case .notPEM: "not a PEM private key (expected -----BEGIN PRIVATE KEY-----)"
        case .notPKCS8: "not a PKCS#8 private key (expected -----BEGIN PRIVATE KEY-----, as App Store Connect's .p8)"
        case .encrypted: "an encrypted private key (App Store Connect keys are unencrypted PKCS#8)"
        case .malformedKey: "a key block that does not decode to a key"
        case .notEC: "not an elliptic-curve key"
        case .unsupportedCurve: "an EC key on a curve other than P-256 and P-384"
        case .notP256: "not an EC key on P-256 (ES256 needs P-256)"
        case .malformedSignature: "not a well-formed ECDSA signature"
        case .keyGenerationFailed: "EC key generation failed"
        case .signingFailed: "ECDSA signing failed"
        case .encodingFailed: "the key could not be encoded"
        }
    }
}
