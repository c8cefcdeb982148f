/// Every size, depth and count limit of the verifier, in one place.
public enum VerificationLimits {
    /// A JWS longer than this is refused before any parsing (64 KiB).
    public static let jwsLengthBytesMax = 64 * 1024
    /// Maximum nesting of arrays/objects in a JSON payload or header.
    public static let jsonDepthMax = 32
    /// Verified intermediate+leaf pairs kept in the chain cache.
    public static let chainCacheEntriesMax = 64
    /// An ES256 signature is r||s, 32 bytes each.
    public static let signatureLengthBytes = 64
    /// Certificates in `x5c`: leaf, intermediate, root.
    public static let certificateChainLength = 3
    /// A good OCSP answer is reused for this long (Apple's library: 15 minutes).
    public static let ocspResultLifetimeSeconds: Int64 = 15 * 60
    /// After a refresh found no usable answer, the responder is asked again
    /// no sooner than this; verifications in between use the GOOD answers
    /// still held (until their `nextUpdate`) or are refused retryable
    /// without a fetch (`OCSPStanding`).
    public static let ocspRetryIntervalSeconds: Int64 = 30
    /// Largest OCSP response body accepted from a responder.
    public static let ocspResponseBytesMax = 1024 * 1024
    /// OCSP fetch threads alive at once (`HTTPOCSPFetcher`).
    public static let ocspFetchesInFlightMax = 8
    /// Allowed clock skew when checking OCSP thisUpdate/nextUpdate.
    public static let ocspClockSkewSeconds = 300
    /// The oldest `thisUpdate` accepted from an OCSP answer without
    /// `nextUpdate` (which would otherwise never go stale): a day.
    public static let ocspAnswerWithoutNextUpdateAgeMaxSeconds = 86_400
}
