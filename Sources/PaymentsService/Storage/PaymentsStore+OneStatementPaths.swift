import PostgresClient

/// The purchase's happy path in one autocommitted statement per step
/// (docs/PERFORMANCE.md, "Fewer statements per purchase"). Each decision
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
        async throws(PaymentsError) -> WordResult? {
        let state = Self.firstState(verdict, signedAtUnixMilliseconds: signedAt, of: payment)
        return try await mappingErrors {
            try await self.pool.withConnection { connection in
                try await self.insert(payment, state: state, in: connection)
                    .map { WordResult(before: nil, after: $0, accepted: true, conflict: false) }
            }
        }
    }
}
