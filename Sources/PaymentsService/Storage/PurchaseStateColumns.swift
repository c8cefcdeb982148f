/// How a `PurchaseState` is stored in `apple_iap_transactions`: the value of
/// each state column and of its views (`status`, `pending_action`,
/// `failure_code`), as `PurchaseLifecycle` derives them. One mapping for
/// every statement that writes a state (the insert of a new row, the update
/// of a locked one, the guarded update of a step's result), so they cannot
/// disagree.
struct PurchaseStateColumns: Sendable {
    var status: PaymentStatus
    var pendingAction: PendingAction?
    /// Apple's terms when the verdict is a revocation (`revoked` is `revocation != nil`).
    var revocation: Revocation?
    var verdictSignedAtUnixMilliseconds: Int64?
    var claimed: Bool
    var credits: Int64
    /// `grant_state`: `not_owed`, `owed`, `applied` or `refused`.
    var grantState: String
    /// The refusal's reason, or INSUFFICIENT_BALANCE while a clawback in force left an overdue amount.
    var failureCode: String?
    var cycle: ClawbackCycle?
    /// The purchase's ledger event once the grant is applied (a granted row always names it).
    var grantLedgerEventId: String?

    init(_ state: PurchaseState, transactionId: String) {
        status = PurchaseLifecycle.status(state)
        pendingAction = PurchaseLifecycle.pendingStep(state)?.pendingAction
        revocation = state.verdict.revocation
        verdictSignedAtUnixMilliseconds = state.verdictSignedAtUnixMilliseconds
        claimed = state.claimed
        credits = state.credits
        cycle = state.cycle
        grantState = Self.grantState(state.grant)
        failureCode =
            switch state.grant {
            case .refused(let reason): reason
            default: (state.cycle.map { $0.isInForce && $0.overdue > 0 } ?? false) ? "INSUFFICIENT_BALANCE" : nil
            }
        grantLedgerEventId = state.grant == .applied ? LedgerEventId.purchase(transactionId: transactionId) : nil
    }

    /// `grant_state` of a grant's progress (a refusal's reason goes to `failure_code`).
    static func grantState(_ grant: GrantProgress) -> String {
        switch grant {
        case .notOwed: "not_owed"
        case .owed: "owed"
        case .applied: "applied"
        case .refused: "refused"
        }
    }
}
