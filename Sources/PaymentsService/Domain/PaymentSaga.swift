/// The verify→grant saga and its compensations as a pure state machine: each
/// function takes the row's current state and an outcome, and returns the
/// next state (and what to tell the caller). Storage applies the returned
/// state inside a transaction that holds the row lock; nothing here does I/O.
///
/// Exactly-once crediting rests on two facts: every call into PointsService
/// is idempotent by event id, and a row only leaves `verified` by a
/// transition below, so a crash between any two steps leaves a pending
/// action that the worker (or the app's retry) replays safely.
enum PaymentSaga {
    /// What a verify request finds when the transaction is already recorded.
    enum ExistingRowDecision: Equatable {
        /// Same user, already credited: answer `already_granted`.
        case alreadyGranted
        /// Same user, grant still owed: run step 2 now (idempotent).
        case resumeGrant
        /// Same user, permanently refused earlier: answer that failure again.
        case refusedEarlier(failureCode: String)
        /// Refunded or revoked: never credit.
        case revoked
        /// Another user owns this transaction.
        case conflict
    }

    static func decideExisting(_ state: PaymentState, ownerUserId: String?, requestingUserId: String) -> ExistingRowDecision {
        if state.status.isTakenBack || state.revoked { return .revoked }
        guard ownerUserId == requestingUserId else { return .conflict }
        switch state.status {
        case .granted: return .alreadyGranted
        case .verified, .received: return .resumeGrant
        case .failed: return .refusedEarlier(failureCode: state.failureCode ?? "GRANT_REFUSED")
        case .refunded, .refundedInsufficient, .revoked: return .revoked
        }
    }

    /// Outcome of saga step 2 (`Points.Grant`).
    enum GrantOutcome: Equatable {
        case credited
        /// PointsService refused for good (e.g. STARTER_PACK_INELIGIBLE).
        case refused(reason: String)
        /// Unavailable, deadline, or any error a retry could fix.
        case transientFailure
    }

    /// Step 3: the state after the grant call returned.
    static func afterGrant(_ state: PaymentState, outcome: GrantOutcome) -> PaymentState {
        var next = state
        switch outcome {
        case .credited:
            // If Apple took the purchase back while the grant was in flight,
            // the credits just landed must be clawed back.
            next.status = .granted
            next.pendingAction = state.revoked ? .clawback : nil
            next.failureCode = nil
        case .refused(let reason):
            guard state.status == .verified || state.status == .received else { return state }
            next.status = state.revoked ? .revoked : .failed
            next.pendingAction = nil
            next.failureCode = reason
        case .transientFailure:
            // Stays owed; the worker retries with backoff.
            break
        }
        return next
    }

    /// What a REFUND or REVOKE notification does to a recorded transaction.
    static func afterRefundNotice(_ state: PaymentState) -> PaymentState {
        var next = state
        next.revoked = true
        switch state.status {
        case .granted:
            next.pendingAction = .clawback
        case .verified, .received:
            // The grant may be in flight or may have landed before a crash:
            // claw back (a clawback of a purchase never credited is answered
            // EVENT_NOT_FOUND and ends as `revoked`).
            next.pendingAction = .clawback
        case .failed:
            next.status = .revoked
            next.pendingAction = nil
        case .refunded, .refundedInsufficient, .revoked:
            // Already taken back, or a clawback already owed: a redelivery.
            if state.pendingAction == .reverseClawback { next.pendingAction = nil }
        }
        return next
    }

    /// Outcome of the compensating `Points.Clawback`.
    enum ClawbackOutcome: Equatable {
        case deducted(overdueAmount: Int64)
        /// PointsService has no purchase for this event: never credited.
        case nothingToTakeBack
        case transientFailure
    }

    static func afterClawback(_ state: PaymentState, outcome: ClawbackOutcome) -> PaymentState {
        var next = state
        switch outcome {
        case .deducted(let overdue):
            next.status = overdue > 0 ? .refundedInsufficient : .refunded
            next.failureCode = overdue > 0 ? "INSUFFICIENT_BALANCE" : nil
            next.overdueAmount = overdue
            next.pendingAction = nil
        case .nothingToTakeBack:
            if state.status == .granted {
                // Points must know a purchase we recorded as granted; keep
                // retrying rather than silently dropping the clawback.
                return state
            }
            next.status = .revoked
            next.pendingAction = nil
        case .transientFailure:
            break
        }
        return next
    }

    /// What REFUND_REVERSED does: give back what the clawback took, once.
    static func afterRefundReversedNotice(_ state: PaymentState) -> PaymentState {
        var next = state
        switch (state.status, state.pendingAction) {
        case (.refunded, _), (.refundedInsufficient, _):
            next.pendingAction = .reverseClawback
        case (.granted, .clawback):
            // The clawback never ran: cancel it.
            next.revoked = false
            next.pendingAction = nil
        default:
            break
        }
        return next
    }

    enum ReverseOutcome: Equatable {
        case restored
        case transientFailure
    }

    static func afterReverseClawback(_ state: PaymentState, outcome: ReverseOutcome) -> PaymentState {
        guard outcome == .restored else { return state }
        var next = state
        next.status = .granted
        next.revoked = false
        next.pendingAction = nil
        next.failureCode = nil
        next.overdueAmount = 0
        return next
    }
}
