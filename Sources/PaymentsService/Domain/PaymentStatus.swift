import Contracts

/// `apple_iap_transactions.status`
/// (docs/protocols/payments/apple-iap-protocol.md, 3.3): where one Apple
/// transaction is in its life, as `PurchaseLifecycle.status` derives it for people and
/// queries. Decisions are made on `PurchaseState`, never on this.
enum PaymentStatus: String, CaseIterable, Sendable {
    /// Known from Apple's notifications only: no app has claimed it for a user yet.
    case received
    /// Claimed by the app's verify; the grant is owed.
    case verified
    /// Credited (a clawback may be owed).
    case granted
    /// Permanently refused (e.g. starter pack already bought); never credited.
    case failed
    /// Apple refunded it and the clawback in force took the credits back.
    case refunded
    /// Apple refunded it but the balance could not cover the credits: taken
    /// down to zero, the rest recorded as overdue, an alert raised.
    case refundedInsufficient = "refunded_insufficient"
    /// Apple took it back before it was ever credited; nothing to take back.
    case revoked
}

/// The kind of step a row owes (`pending_action`), for the worker's index.
enum PendingAction: String, Sendable {
    /// Saga step 2: `Points.Grant`.
    case grant
    /// Compensation: `Points.Clawback` after a refund or revoke.
    case clawback
    /// `Points.ReverseClawback` after REFUND_REVERSED.
    case reverseClawback = "reverse_clawback"
}

/// The idempotency keys of the calls into PointsService
/// (docs/protocols/payments/apple-iap-protocol.md, section 6). Refund cycle 1
/// is `refund.apple_iap:{transaction_id}`; later
/// cycles add `:{n}`, so each movement is its own event.
enum LedgerEventId {
    static func purchase(transactionId: String) -> String {
        LedgerEventNamespace.purchase + "apple_iap:\(transactionId)"
    }

    static func refund(transactionId: String, cycle: Int = 1) -> String {
        precondition(cycle >= 1, "refund cycles count from 1")
        return LedgerEventNamespace.refund + "apple_iap:\(transactionId)" + (cycle == 1 ? "" : ":\(cycle)")
    }

    static func refundReversal(transactionId: String, cycle: Int = 1) -> String {
        precondition(cycle >= 1, "refund cycles count from 1")
        return LedgerEventNamespace.refundReversal + "apple_iap:\(transactionId)" + (cycle == 1 ? "" : ":\(cycle)")
    }
}
