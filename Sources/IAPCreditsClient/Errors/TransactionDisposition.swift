/// What happens to the StoreKit transaction after the gateway answered its
/// verify request. Finishing is irreversible (StoreKit then forgets the
/// transaction), so only answers that settle it for good finish it.
public enum TransactionDisposition: String, Sendable, Hashable, CaseIterable {
    /// Finish it: credited (`granted`, `already_granted`) or revoked by Apple.
    case finish
    /// Keep it unfinished and resubmit with backoff (and on every launch).
    case keepAndRetry
    /// Keep it unfinished, report it, and resubmit only on the next launch
    /// (or when the app asks): the gateway refused it, and a person (support,
    /// an operator, a catalog fix) must act before it can be credited.
    case keepAndReport
}
