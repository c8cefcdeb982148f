import Contracts
import Foundation
import Logging
import Metrics
import ServiceKit
import UUIDText

/// Runs the ledger steps a transaction owes (grant, clawback, reversal) and
/// records each outcome, only while the row still owes that very step:
/// in one statement while the row is as the runner read it
/// (`PaymentsStore.completeIfUnchanged`), else under the row lock
/// (`PaymentsStore.complete`). Used inline right after a request, by the
/// saga worker and by `redrive`; a runner only runs a row it holds the lease
/// of, and every PointsService call is idempotent by event id, so a step run
/// twice (after a lost reply or an expired lease) is safe.
struct LedgerStepRunner: Sendable {
    let store: PaymentsStore
    let points: PointsLedger
    let logger: Logger
    /// Step outcomes, retries and clawback results (nil: not counted, e.g. `redrive`).
    var metrics: PaymentsMetrics? = nil

    /// What running a transaction's owed steps came to.
    struct Run: Sendable {
        /// The row after the last step recorded.
        var record: PaymentRecord
        /// The grant's answer, when this run called `Points.Grant` successfully.
        var grant: GrantResponse?
        /// Why the last step did not finish, if it did not.
        var failure: StepFailure?
    }

    /// Runs the steps `leased` owes (its lease held by the caller) one after
    /// another, at most `PaymentsLimits.inlineStepsMax`, until nothing is owed,
    /// a step fails (it stays owed, retried by the worker after a backoff),
    /// or another runner holds the lease.
    func runOwedSteps(_ leased: PaymentRecord, requestId: String? = nil) async -> Run {
        var run = Run(record: leased)
        for _ in 0..<PaymentsLimits.inlineStepsMax {
            guard let step = run.record.pendingStep else { return run }
            do {
                try await runStep(step, &run, requestId: requestId)
            } catch {
                logger.warning(
                    "saga step not recorded",
                    [
                        "transaction_id": leased.transactionId, "step": "\(step)", "error": "\(error)",
                        "request_id": requestId ?? "",
                    ])
                return run
            }
            guard run.failure == nil, run.record.pendingStep != nil else { return run }
            // The next step is due at once: take its lease like anyone else.
            guard let claimed = try? await store.claim(transactionId: leased.transactionId) else { return run }
            run.record = claimed
        }
        return run
    }

    private func runStep(_ step: LedgerStep, _ run: inout Run, requestId: String?) async throws(PaymentsError) {
        let record = run.record
        let outcome: StepOutcome
        switch step {
        case .grant:
            switch await points.grant(record, requestId: requestId) {
            case .success(let granted):
                FaultInjection.hit("payments.after_step2")
                run.grant = granted
                outcome = .granted(credits: granted.creditsAdded)
            case .failed(.refused(let reason)):
                logger.notice(
                    "grant refused",
                    ["transaction_id": record.transactionId, "reason": reason.rawValue, "request_id": requestId ?? ""])
                outcome = .grantRefused(reason: reason.rawValue)
            case .failed(let failure):
                return try await postpone(step, record, failure, &run, requestId: requestId)
            }
        case .clawback(let cycle, let amount, let reason):
            switch await points.clawback(record, cycle: cycle, amount: amount, reason: reason, requestId: requestId) {
            case .success(let clawback):
                outcome = .clawedBack(deducted: clawback.creditsDeducted, overdue: clawback.overdueAmount)
            case .failed(let failure):
                return try await postpone(step, record, failure, &run, requestId: requestId)
            }
        case .reverse(let cycle):
            switch await points.reverseClawback(record, cycle: cycle, requestId: requestId) {
            case .success:
                outcome = .reversed
            case .failed(let failure):
                return try await postpone(step, record, failure, &run, requestId: requestId)
            }
        }
        // Only a credited purchase names its ledger entry (docs/protocols/payments/apple-iap-protocol.md: "present once credited").
        let ledgerEventId: String? =
            if case .granted = outcome { LedgerEventId.purchase(transactionId: record.transactionId) } else { nil }
        switch try await store.recordResult(step, with: outcome, over: record, ledgerEventId: ledgerEventId) {
        case .applied(let updated):
            if step == .grant { FaultInjection.hit("payments.after_step3") }
            run.record = updated
            count(step, Self.outcomeLabel(outcome), record)
            if case .clawedBack(_, let overdue) = outcome { metrics?.recordClawback(overdueCredits: Int(overdue)) }
            AuditLog(logger).record(
                SagaAudit.message, SagaAudit.fields(step, outcome, after: updated, requestId: requestId))
            report(step, outcome, before: record, after: updated, requestId: requestId)
        case .stale(let current):
            count(step, .stale, record)
            // Another runner recorded this step first (or an operator moved
            // the row): its answer stands, ours is the same replay.
            logger.info(
                "saga step result already recorded", ["transaction_id": record.transactionId, "step": "\(step)"])
            run.record = current
        }
    }

    private func postpone(
        _ step: LedgerStep, _ record: PaymentRecord, _ failure: StepFailure, _ run: inout Run, requestId: String?
    ) async throws(PaymentsError) {
        run.failure = failure
        let fields = [
            "transaction_id": record.transactionId, "step": "\(step)", "error": failure.detail,
            "request_id": requestId ?? "",
            "attempt": "\(record.attemptCount)",
        ]
        count(step, Self.outcomeLabel(failure), record)
        switch failure {
        case .needsOperator(let reason, _):
            // docs/protocols/payments/apple-iap-protocol.md 3.2 (PAYMENT_GRANT_FAILED): verified, kept, retried; someone must fix the cause.
            logger.critical(
                "ALERT saga step needs an operator",
                fields.merging(["alert": "saga_step_needs_operator", "reason": reason.rawValue]) { $1 })
        case .transient, .refused:
            logger.warning("saga step deferred to the worker", fields)
        }
        if let updated = try await store.postpone(step, seen: record, error: failure.detail) { run.record = updated }
    }

    // MARK: Metrics

    /// Counts a finished step. A claim raises `attemptCount` (the first
    /// attempt runs at 1; recording a step resets it), so above 1 is a retry.
    private func count(_ step: LedgerStep, _ outcome: SagaStepOutcomeLabel, _ record: PaymentRecord) {
        metrics?.recordSagaStep(Self.stepLabel(step), outcome, isRetry: record.attemptCount > 1)
    }

    static func stepLabel(_ step: LedgerStep) -> SagaStepLabel {
        switch step {
        case .grant: .grant
        case .clawback: .clawback
        case .reverse: .reversal
        }
    }

    /// A step PointsService answered: applied, or refused for good (a grant's business refusal).
    static func outcomeLabel(_ outcome: StepOutcome) -> SagaStepOutcomeLabel {
        switch outcome {
        case .granted, .clawedBack, .reversed: .applied
        case .grantRefused: .refused
        }
    }

    /// A step that stays owed: an operator's fix, or a retry after a backoff.
    static func outcomeLabel(_ failure: StepFailure) -> SagaStepOutcomeLabel {
        switch failure {
        case .needsOperator: .needsOperator
        case .transient, .refused: .deferred
        }
    }

    private func report(
        _ step: LedgerStep, _ outcome: StepOutcome, before: PaymentRecord, after: PaymentRecord, requestId: String?
    ) {
        var fields = [
            "transaction_id": after.transactionId, "step": "\(step)", "status": after.status.rawValue,
            "user_id": after.userId.map(UUIDText.lowercased) ?? "", "request_id": requestId ?? "",
        ]
        switch outcome {
        case .granted:
            fields["credits"] = "\(after.state.credits)"
        case .clawedBack(let deducted, let overdue):
            fields["credits_deducted"] = "\(deducted)"
            fields["overdue_amount"] = "\(overdue)"
            if overdue > 0 {
                // docs/protocols/payments/apple-iap-protocol.md 5.3: the balance could not cover the refund; operators decide what to do.
                logger.critical(
                    "ALERT refund exceeded the balance", fields.merging(["alert": "refunded_insufficient"]) { $1 })
                return
            }
        case .grantRefused(let reason):
            fields["reason"] = reason
        case .reversed:
            break
        }
        logger.notice("saga step done", fields)
    }
}
