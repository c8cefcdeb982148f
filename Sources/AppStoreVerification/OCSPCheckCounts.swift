/// OCSP checks run, by outcome (`SignedDataVerifier.ocspCounts`).
public struct OCSPCheckCounts: Sendable, Equatable {
    /// Both certificates answered GOOD.
    public internal(set) var good: UInt64 = 0
    /// No usable answer (network, responder trouble): retryable.
    public internal(set) var unreachable: UInt64 = 0
    /// A definite refusal: REVOKED, UNKNOWN, an untrusted signer.
    public internal(set) var refused: UInt64 = 0
    /// Verifications accepted on GOOD answers held through a failed refresh.
    public internal(set) var acceptedThroughOutage: UInt64 = 0

    public init() {}

    mutating func count(_ outcome: OCSPStanding.Outcome) {
        switch outcome {
        case .good: good += 1
        case .refused(let failure) where failure.isRetryable: unreachable += 1
        case .refused: refused += 1
        }
    }
}
