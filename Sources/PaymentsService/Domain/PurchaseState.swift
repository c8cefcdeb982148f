/// What the ledger has done about one transaction and what Apple says now:
/// the part of an `apple_iap_transactions` row that `PurchaseLifecycle`
/// decides on. Storage reads and writes it whole under the row lock.
struct PurchaseState: Equatable, Sendable {
    /// Apple's word in force, and the `signedDate` it carried (nil only for
    /// rows recorded before signed dates were kept).
    var verdict: AppleVerdict
    var verdictSignedAtUnixMilliseconds: Int64?
    /// True once the transaction was claimed for a user (the app's verify,
    /// or Apple's word carrying an appAccountToken this service issued,
    /// `AppleClaimRule`): the row then holds what a grant needs (user,
    /// product, credits, and the email identity when the app claimed it).
    /// A transaction Apple's word could not claim is not.
    var claimed: Bool
    /// What the purchase is worth: the catalog's credits x quantity.
    var credits: Int64
    var grant: GrantProgress
    /// The latest clawback cycle (nil before the first clawback was owed).
    var cycle: ClawbackCycle?

    init(
        verdict: AppleVerdict = .purchased, verdictSignedAtUnixMilliseconds: Int64? = nil, claimed: Bool = true,
        credits: Int64 = 0, grant: GrantProgress = .notOwed, cycle: ClawbackCycle? = nil
    ) {
        self.verdict = verdict
        self.verdictSignedAtUnixMilliseconds = verdictSignedAtUnixMilliseconds
        self.claimed = claimed
        self.credits = credits
        self.grant = grant
        self.cycle = cycle
    }

    /// Credits the ledger holds for this purchase once every owed step ran
    /// (what the model-based tests compare balances with).
    var creditsHeld: Int64 {
        guard grant == .applied else { return 0 }
        guard let cycle, cycle.phase == .clawedBack || cycle.phase == .reversalOwed else { return credits }
        return credits - cycle.deducted
    }
}

/// Saga step 2, the purchase's one grant.
enum GrantProgress: Equatable, Sendable {
    /// Nothing to credit yet: not claimed by an app, or Apple took it all back first.
    case notOwed
    /// `Points.Grant` must run (it may already have: it is replayed until answered).
    case owed
    case applied
    /// PointsService refused it for good (e.g. STARTER_PACK_INELIGIBLE); an
    /// operator's `redrive` makes it owed again.
    case refused(reason: String)
}

/// Refund cycle `number` of a purchase: a clawback of `amount` credits and,
/// if Apple reverses the refund, its reversal. Each has its own ledger event
/// id, so REFUND → REFUND_REVERSED → REFUND takes back twice and restores once.
struct ClawbackCycle: Equatable, Sendable {
    var number: Int
    /// Credits this cycle takes back (all, or Apple's prorated share).
    var amount: Int64
    /// The reason the clawback sends (fixed for the cycle, so retries replay).
    var reason: String
    var phase: Phase
    /// What the clawback actually deducted (at most the balance held) and
    /// what it could not (owed by the user, alerted).
    var deducted: Int64 = 0
    var overdue: Int64 = 0

    enum Phase: String, Sendable {
        /// `Points.Clawback` must run (it may already have).
        case clawbackOwed = "clawback_owed"
        case clawedBack = "clawed_back"
        /// `Points.ReverseClawback` must run (it may already have).
        case reversalOwed = "reversal_owed"
        case reversed
    }

    /// True while the clawback may be in the ledger and is not reversed.
    var isInForce: Bool { phase != .reversed }
}
