import Foundation

/// The money model of one Apple transaction as a pure state machine:
/// (state, event) → state, where the state says what Apple's latest word is
/// and what the ledger did about it, and `pendingStep` says which ledger
/// movement is owed next. Storage applies each transition under the row
/// lock and runs the owed step; nothing here does I/O.
///
/// The rules (docs/ARCHITECTURE.md has them as a table):
/// - Apple's words are ordered by `signedDate`: an older word arriving after
///   a newer one (Apple retries failed deliveries for days) changes nothing.
/// - An owed step is completed before any other is owed. Its outcome is
///   unknown until PointsService answers (the call may have run), so it is
///   never assumed not to have run: a clawback owed when Apple reverses the
///   refund still runs, then is reversed. Every step is idempotent by its
///   event id, so completing it is always safe.
/// - With no step owed, the ledger is moved toward Apple's verdict: a
///   claimed purchase Apple did not take back entirely is granted once;
///   a revocation opens a clawback cycle of `Revocation.creditsToTakeBack`;
///   a reversal reverses the cycle in force; new terms for a revocation in
///   force reverse the old cycle and open a new one.
enum PurchaseLifecycle {
    /// The ledger movement this state owes, if any.
    static func pendingStep(_ state: PurchaseState) -> LedgerStep? {
        if state.grant == .owed { return .grant }
        guard let cycle = state.cycle else { return nil }
        switch cycle.phase {
        case .clawbackOwed: return .clawback(cycle: cycle.number, amount: cycle.amount, reason: cycle.reason)
        case .reversalOwed: return .reverse(cycle: cycle.number)
        case .clawedBack, .reversed: return nil
        }
    }

    // MARK: Events

    /// A new transaction, first seen in a word from Apple (the app's signed
    /// transaction or a notification's), claimed by an app or not.
    static func start(verdict: AppleVerdict, signedAtUnixMilliseconds: Int64?, claimed: Bool, credits: Int64)
        -> PurchaseState
    {
        reconcile(
            PurchaseState(
                verdict: verdict, verdictSignedAtUnixMilliseconds: signedAtUnixMilliseconds, claimed: claimed,
                credits: credits, grant: .notOwed, cycle: nil))
    }

    /// Whether a word signed at `signedAt` is at least as new as the one in force.
    static func isCurrent(signedAtUnixMilliseconds signedAt: Int64?, over state: PurchaseState) -> Bool {
        guard let inForce = state.verdictSignedAtUnixMilliseconds else { return true }
        guard let signedAt else { return false }
        return signedAt >= inForce
    }

    /// Apple's word about the transaction. `accepted` is false for a word
    /// older than the one in force (nothing changes).
    static func receive(_ verdict: AppleVerdict, signedAtUnixMilliseconds signedAt: Int64?, in state: PurchaseState)
        -> (state: PurchaseState, accepted: Bool)
    {
        guard isCurrent(signedAtUnixMilliseconds: signedAt, over: state) else { return (state, false) }
        var next = state
        next.verdict = verdict
        next.verdictSignedAtUnixMilliseconds = signedAt ?? state.verdictSignedAtUnixMilliseconds
        return (reconcile(next), true)
    }

    /// Apple's word together with the claim that came with it (the app's
    /// verify, or Apple's word naming a token of ours; `claimingCredits`
    /// nil: none to apply). The word goes first, so the claim is judged
    /// against Apple's latest verdict. Judged first, the claim would owe a
    /// grant under the older verdict, and the word's revocation could no
    /// longer stop it (an owed step is completed before any other): a
    /// transaction Apple refunded in full would be credited, then clawed
    /// back, and the credits lost if they were spent in between.
    static func receive(
        _ verdict: AppleVerdict, signedAtUnixMilliseconds signedAt: Int64?, claimingCredits credits: Int64?,
        in state: PurchaseState
    ) -> (state: PurchaseState, accepted: Bool) {
        let received = receive(verdict, signedAtUnixMilliseconds: signedAt, in: state)
        guard let credits else { return received }
        return (claim(credits: credits, in: received.state), received.accepted)
    }

    /// What to do with a claim (`PaymentClaim`) on a row that exists: the
    /// owner is named once. The app's verify naming another owner is a
    /// conflict (the purchase is someone else's); Apple's word naming one
    /// through an appAccountToken never overrides an owner already known
    /// (it adds nothing then, and the word itself is still applied).
    enum ClaimAdmission: Equatable, Sendable {
        /// Write the claim: the row gets its owner, product and value.
        case write
        /// Keep the row's claim (or lack of one) as it is.
        case keep
        /// Refuse: the row belongs to another user.
        case conflict
    }

    static func admit(claimBy user: UUID, fromApp: Bool, claimed: Bool, owner: UUID?) -> ClaimAdmission {
        if claimed {
            if owner == user { return .keep }
            return fromApp ? .conflict : .keep
        }
        if let owner, owner != user { return fromApp ? .conflict : .keep }
        return .write
    }

    /// Whether a submission's claim is the one that made the row claimed: a
    /// new row, or one Apple's word recorded unclaimed (without an owner, or
    /// a starter pack whose owner its appAccountToken names but whose grant
    /// waits for the app's email identity). Its credits are then that
    /// submission's answer (`granted`), whichever runner applied the grant;
    /// a submission that found the row claimed is a resubmission
    /// (`already_granted`). `before` is the row's state before the claim
    /// (nil: there was no row).
    static func claimMadeBySubmission(before: PurchaseState?) -> Bool {
        before.map { !$0.claimed } ?? true
    }

    /// A transaction known so far only from Apple's words got an owner and
    /// a value (the app's verify, or an appAccountToken this service issued
    /// in Apple's word): it may now be owed a grant.
    static func claim(credits: Int64, in state: PurchaseState) -> PurchaseState {
        guard !state.claimed else { return state }
        var next = state
        next.claimed = true
        next.credits = credits
        return reconcile(next)
    }

    /// The result of `step`, applied only when the state still owes exactly
    /// that step; nil when it is stale (another runner recorded it first,
    /// or an operator changed the row): the caller drops it.
    static func complete(_ step: LedgerStep, with outcome: StepOutcome, in state: PurchaseState) -> PurchaseState? {
        guard pendingStep(state) == step else { return nil }
        var next = state
        switch (step, outcome) {
        case (.grant, .granted(let credits)):
            next.grant = .applied
            // What the ledger holds decides every later clawback: a prorated
            // refund takes back a share of what was credited.
            if let credits, credits > 0 { next.credits = credits }
        case (.grant, .grantRefused(let reason)):
            next.grant = .refused(reason: reason)
        case (.clawback, .clawedBack(let deducted, let overdue)):
            next.cycle?.phase = .clawedBack
            next.cycle?.deducted = deducted
            next.cycle?.overdue = overdue
        case (.reverse, .reversed):
            next.cycle?.phase = .reversed
        default:
            // An outcome of another kind of step: a bug in the caller.
            assertionFailure("outcome \(outcome) does not belong to step \(step)")
            return nil
        }
        return reconcile(next)
    }

    /// An operator's redrive after fixing a refusal's cause: a refused grant
    /// is owed again (if Apple still lets the user keep credits).
    static func redrive(_ state: PurchaseState) -> PurchaseState {
        guard case .refused = state.grant else { return state }
        var next = state
        next.grant = .notOwed
        return reconcile(next)
    }

    // MARK: The one decision

    /// Moves the ledger one step toward Apple's verdict when nothing is owed.
    static func reconcile(_ state: PurchaseState) -> PurchaseState {
        guard pendingStep(state) == nil else { return state }
        var next = state
        switch state.grant {
        case .notOwed:
            if state.claimed && state.credits > 0 && state.verdict.creditsKept(of: state.credits) > 0 {
                next.grant = .owed
            }
        case .owed, .refused:
            break
        case .applied:
            let inForce = state.cycle.map { $0.isInForce } ?? false
            let wanted = state.verdict.revocation?.creditsToTakeBack(of: state.credits) ?? 0
            if inForce, let cycle = state.cycle, wanted != cycle.amount {
                // Apple reversed the refund, or changed its terms: undo the cycle in force first.
                next.cycle?.phase = .reversalOwed
            } else if !inForce, wanted > 0, let revocation = state.verdict.revocation {
                next.cycle = ClawbackCycle(
                    number: (state.cycle?.number ?? 0) + 1, amount: wanted, reason: revocation.reason,
                    phase: .clawbackOwed)
            }
        }
        return next
    }

    // MARK: Views

    /// `apple_iap_transactions.status` for this state
    /// (docs/protocols/payments/apple-iap-protocol.md, 3.3).
    static func status(_ state: PurchaseState) -> PaymentStatus {
        switch state.grant {
        case .notOwed:
            if state.verdict.revocation != nil { return .revoked }
            return state.claimed ? .verified : .received
        case .owed:
            return .verified
        case .refused:
            return state.verdict.revocation != nil ? .revoked : .failed
        case .applied:
            guard let cycle = state.cycle else { return .granted }
            switch cycle.phase {
            case .clawbackOwed, .reversed: return .granted
            case .clawedBack, .reversalOwed: return cycle.overdue > 0 ? .refundedInsufficient : .refunded
            }
        }
    }
}
