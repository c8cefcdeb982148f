import PostgresClient
import ServiceKitDatabase

/// The purchase's happy path in one autocommitted statement per step
/// (docs/PERFORMANCE.md, "One statement per step"). Each decision
/// still comes from the pure `PurchaseLifecycle`; each statement carries the
/// precondition the row-locked transaction would have checked, and when it
/// does not hold nothing is written and the caller takes that transaction
/// path, unchanged, so every race ends as it did.
extension PaymentsStore {
    /// Saga step 1 for a transaction seen for the first time, as one
    /// autocommitted `insert ... on conflict do nothing returning`: the row
    /// is written in the state `PurchaseLifecycle.start` gives Apple's word
    /// and `payment`'s claim, leased to the caller when it owes a step,
    /// exactly as `record` inserts it. Nil when the row exists (a
    /// resubmission, a concurrent one, Apple's word recorded first): nothing
    /// was written, and the caller records through `record(..., rowExists:
    /// true)` in a transaction, which locks the row and admits the claim.
    ///
    /// No transaction is needed: the insert is the only write, and a new row
    /// has no earlier state to check, no owner to conflict with and no
    /// reader before it commits. A row that conflicts is committed by the
    /// time the insert returns (ON CONFLICT waits for a concurrent inserter),
    /// so the fallback's locked read finds it.
    func recordIfNew(_ verdict: AppleVerdict, signedAtUnixMilliseconds signedAt: Int64?, for payment: NewPayment)
        async throws(PaymentsError) -> WordResult?
    {
        let write = firstSightWrite(
            payment, state: Self.firstState(verdict, signedAtUnixMilliseconds: signedAt, of: payment))
        return try await run(write, through: firstSightBatcher)
            .map { WordResult(before: nil, after: $0, accepted: true, conflict: false) }
    }

    /// A step's result (saga step 3 for the grant) as one autocommitted
    /// guarded update: `outcome` of `step` is applied to `seen`, the row as
    /// the runner read it when it took the lease, by
    /// `PurchaseLifecycle.complete` on `seen.state`, and written only where
    /// the row still reads as exactly `seen.state` in `seen`'s owing period
    /// (`PurchaseStateGuard`).
    /// Nil when the guard misses (Apple's word, another runner or an
    /// operator changed the row since): nothing was written, and the caller
    /// records through `complete`, which decides again on the locked row.
    ///
    /// Why the guard is sufficient: `complete` locks the row, reads its
    /// state, and writes `PurchaseLifecycle.complete(step, outcome, state)`
    /// through `write`, whose values are functions of that state (its views,
    /// its owed step for the schedule) and of the row's own schedule
    /// columns, which this update reads in place exactly as `write` does.
    /// PostgreSQL evaluates the guard on the newest committed version of the
    /// row while the update holds its lock, so whenever it holds, the locked
    /// read would have found `seen.state` and written this same row. Like
    /// `complete`, it checks the owed step and not the lease: a result is a
    /// compare-and-set on the state, and every step is idempotent by its
    /// event id.
    func completeIfUnchanged(
        _ step: LedgerStep, with outcome: StepOutcome, over seen: PaymentRecord, ledgerEventId: String? = nil
    )
        async throws(PaymentsError) -> PaymentRecord?
    {
        guard let write = Self.stepResultWrite(step, with: outcome, over: seen, ledgerEventId: ledgerEventId) else {
            return nil
        }
        return try await run(write, through: stepResultBatcher)
    }

    /// Records `outcome` of `step`, which the runner ran over `seen` (the
    /// row as it read it when it took the lease): in one guarded statement
    /// while the row still reads as `seen` (`completeIfUnchanged`), otherwise
    /// under the row lock (`complete`), which decides on the row as it is now.
    ///
    /// `.applied` too when the locked path finds the row reading exactly as
    /// this result leaves `seen`: the guarded update committed, its reply was
    /// lost with its connection, and run again (`CommitBatcher` answers
    /// `.runAlone`) it missed its own write. The outcome is then this
    /// attempt's to report (step metrics, the overdue-refund alert, the
    /// audit line), and nothing is written twice. Limit: a second runner
    /// that ran the same step with the same answer after this one's lease
    /// ran out reports it again (its observers count it twice, the ledger
    /// and the row once).
    func recordResult(_ step: LedgerStep, with outcome: StepOutcome, over seen: PaymentRecord, ledgerEventId: String?)
        async throws(PaymentsError) -> StepRecording
    {
        if let applied = try await completeIfUnchanged(step, with: outcome, over: seen, ledgerEventId: ledgerEventId) {
            return .applied(applied)
        }
        let recorded = try await complete(
            step, with: outcome, transactionId: seen.transactionId, ledgerEventId: ledgerEventId, within: seen)
        guard case .stale(let current) = recorded, Self.readsAsRecorded(current, step, with: outcome, over: seen) else {
            return recorded
        }
        return .applied(current)
    }

    /// Whether `current` reads exactly as `outcome` of `step` leaves `seen`.
    static func readsAsRecorded(
        _ current: PaymentRecord, _ step: LedgerStep, with outcome: StepOutcome, over seen: PaymentRecord
    ) -> Bool {
        guard let next = PurchaseLifecycle.complete(step, with: outcome, in: seen.state) else { return false }
        return current.state == next
    }

    /// The guarded update of `completeIfUnchanged` as one row of
    /// `StepResultUpdateBatch`; nil when `seen` does not owe `step`.
    static func stepResultWrite(
        _ step: LedgerStep, with outcome: StepOutcome, over seen: PaymentRecord, ledgerEventId: String?
    )
        -> PurchaseRowWrite?
    {
        guard let next = PurchaseLifecycle.complete(step, with: outcome, in: seen.state) else { return nil }
        let values =
            stateUpdateValues(next, over: seen, ledgerEventId: ledgerEventId, verdictChanged: false)
            + PurchaseStateGuard.values(seen)
        return PurchaseRowWrite(transactionId: seen.transactionId, values: values)
    }

    /// Runs `write` in the next statement `batcher` commits (with the
    /// writes of other callers that arrive meanwhile, or alone at once when
    /// no statement is running); a failed batch is run again alone here,
    /// exactly as without batching, and its error is this caller's.
    private func run<Statement: PurchaseRowBatchedWrite>(
        _ write: PurchaseRowWrite, through batcher: CommitBatcher<Statement>
    )
        async throws(PaymentsError) -> PaymentRecord?
    {
        switch await batcher.submit(write) {
        case .outcome(let written):
            return written
        case .runAlone:
            return try await mappingErrors {
                try await self.pool.withConnection { connection in try await Statement.runAlone(write, on: connection) }
            }
        }
    }
}
