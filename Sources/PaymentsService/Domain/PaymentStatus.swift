/// `apple_iap_transactions.status` (PRD 5.3): where one Apple transaction is
/// in its life.
enum PaymentStatus: String, CaseIterable, Sendable {
    /// Seen but not yet verified (kept for the PRD's lifecycle; this service
    /// verifies before it writes, so rows start at `verified`).
    case received
    /// Verified; the grant is pending (saga step 2 not yet confirmed).
    case verified
    /// Credited exactly once.
    case granted
    /// Permanently refused (e.g. starter pack already bought); never credited.
    case failed
    /// Apple refunded it and the credits were taken back in full.
    case refunded
    /// Apple refunded it but the balance could not cover the credits: taken
    /// down to zero, the rest recorded as overdue, an alert raised.
    case refundedInsufficient = "refunded_insufficient"
    /// Apple revoked or refunded it before it was ever credited; a later
    /// verify is refused.
    case revoked

    /// True once Apple has taken the purchase back, whatever was credited.
    var isTakenBack: Bool { self == .refunded || self == .refundedInsufficient || self == .revoked }
}

/// The saga step a row still owes; the background worker drives it to done.
enum PendingAction: String, Sendable {
    /// Saga step 2: `Points.Grant`.
    case grant
    /// Compensation: `Points.Clawback` after a refund or revoke.
    case clawback
    /// `Points.ReverseClawback` after REFUND_REVERSED.
    case reverseClawback = "reverse_clawback"
}

/// The idempotency keys of the saga's calls into PointsService (PRD 5.4).
enum LedgerEventId {
    static func purchase(transactionId: String) -> String { "payment.apple_iap:\(transactionId)" }
    static func refund(transactionId: String) -> String { "refund.apple_iap:\(transactionId)" }
    static func refundReversal(transactionId: String) -> String { "refund_reversed.apple_iap:\(transactionId)" }
}
