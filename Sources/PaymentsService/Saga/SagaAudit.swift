import UUIDText

/// The audit line of every saga outcome PaymentsService records (through
/// `AuditLog`): exactly one per ledger step whose result was written to the
/// purchase's row, by whichever runner recorded it (inline, the worker or
/// `redrive`): the transaction id, the user id, the step (`grant`,
/// `clawback`, `reversal`), the outcome (`granted`, `grant_refused` with
/// its reason, `clawed_back`, `reversed`), the purchase's new status, and
/// the credits the step moved when known (+ granted, - clawed back, with
/// the overdue rest). A step another runner recorded first, or one
/// deferred to a retry, writes none: nothing was decided by it.
enum SagaAudit {
    /// The fixed message of every saga audit line.
    static let message = "saga outcome"

    /// The fields of one line (pure).
    static func fields(_ step: LedgerStep, _ outcome: StepOutcome, after record: PaymentRecord, requestId: String?)
        -> [String: String]
    {
        var fields = [
            "transaction_id": record.transactionId, "user_id": record.userId.map(UUIDText.lowercased) ?? "",
            "step": LedgerStepRunner.stepLabel(step).rawValue, "status": record.status.rawValue,
        ]
        switch outcome {
        case .granted:
            fields["outcome"] = "granted"
            fields["credits"] = String(record.state.credits)
        case .grantRefused(let reason):
            fields["outcome"] = "grant_refused"
            fields["credits"] = "0"
            fields["reason"] = reason
        case .clawedBack(let deducted, let overdue):
            fields["outcome"] = "clawed_back"
            fields["credits"] = String(-deducted)
            fields["overdue"] = String(overdue)
        case .reversed:
            fields["outcome"] = "reversed"
        }
        if let requestId, !requestId.isEmpty { fields["request_id"] = requestId }
        return fields
    }
}
