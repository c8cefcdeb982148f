/// Every size limit of the crypto primitives, in one place.
public enum CryptoLimits {
    /// The largest PEM text read by default (a certificate bundle or a
    /// saved local CA is a few KiB).
    public static let pemTextBytesMax = 1024 * 1024
    /// A .p8 is a few hundred bytes; anything far larger is not one.
    public static let privateKeyPEMBytesMax = 16 * 1024
    /// Base64 characters per PEM body line (RFC 7468 section 2).
    public static let pemLineLengthMax = 64
    /// Idle OpenSSL verify contexts kept per public key (one per concurrent
    /// verification; more are created and freed when needed).
    public static let verifyContextsPerKeyMax = 8
}
