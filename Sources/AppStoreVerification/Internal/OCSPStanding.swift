/// What the verifier knows of one cached chain's revocation status (online
/// checks), and what to do with it at a given second. Pure: the verifier asks
/// `decision(atSeconds:)` and reports each check's outcome to `record(_:atSeconds:)`.
///
/// GOOD answers for both certificates are reused until the next refresh
/// (`VerificationLimits.ocspResultLifetimeSeconds`, as Apple's library). When
/// the responder cannot be reached at refresh time, the answers already held
/// are used until their own `nextUpdate` (the responder's word on how long
/// they hold, RFC 5019 §4), so an outage of Apple's OCSP does not stop
/// crediting at once; meanwhile the responder is asked again at most every
/// `ocspRetryIntervalSeconds`, and without answers held every verification
/// in between is refused as retryable without a fetch. A definite refusal
/// (REVOKED, UNKNOWN, an untrusted signer) withdraws the answers held and is
/// repeated without asking until the next refresh; a later outage does not
/// turn it into a retryable one.
struct OCSPStanding: Sendable, Equatable {
    /// What a verification does about revocation at a given second.
    enum Decision: Equatable, Sendable {
        /// Answers held vouch for the chain: no fetch.
        case accept(AcceptedAnswers)
        /// Ask the responder (then record the outcome and decide again).
        case ask
        /// Refuse without asking.
        case refuse(VerificationFailure)
    }

    /// Which answers an accepted verification stood on.
    enum AcceptedAnswers: Equatable, Sendable {
        /// Within the refresh period of the last GOOD answers.
        case current
        /// The last refresh could not reach the responder; the earlier GOOD
        /// answers still hold.
        case heldThroughOutage
    }

    /// What one check of both certificates came to.
    enum Outcome: Equatable, Sendable {
        /// Both GOOD; the earlier of the two answers' ends.
        case good(validUntilSeconds: Int64)
        /// A definite or a retryable refusal (`VerificationFailure.isRetryable`).
        case refused(VerificationFailure)
    }

    /// The responder is asked from this second on (never asked: `.min`).
    private(set) var nextAskSeconds: Int64 = .min
    /// The GOOD answers held vouch for the chain until this second.
    private(set) var goodUntilSeconds: Int64 = .min
    /// Why the last refresh brought no GOOD answers (nil after a GOOD one).
    private(set) var lastRefusal: VerificationFailure?

    /// Ask when a refresh is due, otherwise `decisionWithoutAsking`.
    func decision(atSeconds now: Int64) -> Decision {
        now >= nextAskSeconds ? .ask : decisionWithoutAsking(atSeconds: now)
    }

    /// Accept or refuse on what is held, whether or not a refresh is due
    /// (for a verification that already waited for one check).
    func decisionWithoutAsking(atSeconds now: Int64) -> Decision {
        if let lastRefusal {
            if lastRefusal.isRetryable && now < goodUntilSeconds { return .accept(.heldThroughOutage) }
            return .refuse(lastRefusal)
        }
        if now < goodUntilSeconds { return .accept(.current) }
        return .refuse(.retryable(reason: "no OCSP answer held"))
    }

    mutating func record(_ outcome: Outcome, atSeconds now: Int64) {
        switch outcome {
        case .good(let validUntilSeconds):
            // An answer within the clock skew of its end still counts for
            // the verification that fetched it.
            goodUntilSeconds = max(validUntilSeconds, now + 1)
            lastRefusal = nil
            nextAskSeconds = min(now + VerificationLimits.ocspResultLifetimeSeconds, goodUntilSeconds)
        case .refused(let failure) where failure.isRetryable:
            if lastRefusal.map({ !$0.isRetryable }) != true { lastRefusal = failure }
            nextAskSeconds = now + VerificationLimits.ocspRetryIntervalSeconds
        case .refused(let failure):
            goodUntilSeconds = .min
            lastRefusal = failure
            nextAskSeconds = now + VerificationLimits.ocspResultLifetimeSeconds
        }
    }
}
