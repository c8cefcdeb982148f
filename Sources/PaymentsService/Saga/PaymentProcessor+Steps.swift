import Foundation

/// Runs whatever saga step a row owes (grant, clawback, reverse) and records
/// the outcome. Used inline right after a request and by the worker; safe
/// to run twice at once because every PointsService call is idempotent.
extension PaymentProcessor {
    func runPendingStep(_ record: PaymentRecord, requestId: String? = nil) async {
        do {
            switch record.state.pendingAction {
            case .grant: try await runGrant(record, requestId: requestId)
            case .clawback: try await runClawback(record, requestId: requestId)
            case .reverseClawback: try await runReverse(record, requestId: requestId)
            case nil: return
            }
        } catch {
            // The row keeps its pending action and lease; the worker retries.
            logger.warning("saga step failed", ["transaction_id": record.transactionId, "error": "\(error)", "request_id": requestId ?? ""])
        }
    }

    private func runGrant(_ record: PaymentRecord, requestId: String?) async throws(PaymentsError) {
        let step: PaymentsStore.StepResult
        switch await points.grant(record, requestId: requestId) {
        case .success(let granted):
            step = .init(transition: { PaymentSaga.afterGrant($0, outcome: .credited) }, ledgerEventId: granted.eventId)
        case .refused(let reason):
            step = .init(transition: { PaymentSaga.afterGrant($0, outcome: .refused(reason: reason)) })
        case .transient(let detail):
            step = .init(transition: { PaymentSaga.afterGrant($0, outcome: .transientFailure) }, transientError: detail)
        }
        let updated = try await store.apply(step, transactionId: record.transactionId)
        logger.info("saga grant step", ["transaction_id": record.transactionId, "status": updated.state.status.rawValue,
                                        "pending": updated.state.pendingAction?.rawValue ?? ""])
        if updated.state.pendingAction == .clawback { await runPendingStep(updated, requestId: requestId) }
    }

    private func runClawback(_ record: PaymentRecord, requestId: String?) async throws(PaymentsError) {
        let step: PaymentsStore.StepResult
        switch await points.clawback(record, requestId: requestId) {
        case .success(let clawback):
            step = .init(transition: { PaymentSaga.afterClawback($0, outcome: .deducted(overdueAmount: clawback.overdueAmount)) })
        case .refused(let reason) where reason == "EVENT_NOT_FOUND":
            step = .init(transition: { PaymentSaga.afterClawback($0, outcome: .nothingToTakeBack) },
                         transientError: record.state.status == .granted ? "clawback: purchase not found in points" : nil)
        case .refused(let reason):
            step = .init(transition: { PaymentSaga.afterClawback($0, outcome: .transientFailure) }, transientError: "clawback refused: \(reason)")
            logger.error("clawback refused; retrying with backoff", ["transaction_id": record.transactionId, "reason": reason])
        case .transient(let detail):
            step = .init(transition: { PaymentSaga.afterClawback($0, outcome: .transientFailure) }, transientError: detail)
        }
        let updated = try await store.apply(step, transactionId: record.transactionId)
        if updated.state.status == .refundedInsufficient && record.state.status != .refundedInsufficient {
            // PRD 7.4: the balance could not cover the refund; operators decide what to do.
            logger.critical("ALERT refund exceeded the balance", [
                "alert": "refunded_insufficient", "transaction_id": record.transactionId,
                "user_id": record.userId?.uuidString.lowercased() ?? "", "overdue_amount": "\(updated.state.overdueAmount)",
            ])
        } else {
            logger.info("saga clawback step", ["transaction_id": record.transactionId, "status": updated.state.status.rawValue])
        }
    }

    private func runReverse(_ record: PaymentRecord, requestId: String?) async throws(PaymentsError) {
        let step: PaymentsStore.StepResult
        switch await points.reverseClawback(record, requestId: requestId) {
        case .success:
            step = .init(transition: { PaymentSaga.afterReverseClawback($0, outcome: .restored) })
        case .refused(let reason):
            step = .init(transition: { PaymentSaga.afterReverseClawback($0, outcome: .transientFailure) }, transientError: "reverse refused: \(reason)")
        case .transient(let detail):
            step = .init(transition: { PaymentSaga.afterReverseClawback($0, outcome: .transientFailure) }, transientError: detail)
        }
        let updated = try await store.apply(step, transactionId: record.transactionId)
        logger.info("saga reverse step", ["transaction_id": record.transactionId, "status": updated.state.status.rawValue])
    }
}
