/// Saga step 3 (a step's result) for several runners' rows in one guarded
/// `update ... from (values ...)`: each row is written only where it still
/// reads as the state its runner decided on (`PurchaseStateGuard`, checked
/// by PostgreSQL on the newest row version under the row lock, as for the
/// lone update), or left alone (nil: that runner records through the locked
/// path). `PaymentsStore.completeIfUnchanged`.
enum StepResultUpdateBatch: PurchaseRowBatchedWrite {
    static let width = PaymentsStore.stateValueCount + PurchaseStateGuard.valueCount

    static let single = PaymentsStore.guardedStateUpdate

    static func batched(rows: Int) -> String {
        """
        update apple_iap_transactions set
        \(PaymentsStore.stateAssignments(.valuesColumn))
        from \(BatchedRowValues.list(rows: rows, width: width))
        where id = v.p1::uuid
            and \(PurchaseStateGuard.condition(.valuesColumn, first: PaymentsStore.stateValueCount + 1))
        returning \(PaymentsStore.columns)
        """
    }
}
