/// Saga step 1 for transactions seen for the first time, several callers'
/// rows in one `insert ... on conflict (transaction_id) do nothing
/// returning`: each row is inserted in the state its caller computed, or
/// left alone when it exists (nil: that caller records through the locked
/// path, as after a lone insert that conflicted). `PaymentsStore.recordIfNew`.
enum FirstSightInsertBatch: PurchaseRowBatchedWrite {
    static let width = 38

    static let single = """
        insert into apple_iap_transactions (
            \(PaymentsStore.firstSightColumns))
        values (\(PaymentsStore.firstSightExpressions(.parameter)))
        on conflict (transaction_id) do nothing
        returning \(PaymentsStore.columns)
        """

    static func batched(rows: Int) -> String {
        """
        insert into apple_iap_transactions (
            \(PaymentsStore.firstSightColumns))
        select \(PaymentsStore.firstSightExpressions(.valuesColumn))
        from \(BatchedRowValues.list(rows: rows, width: width))
        on conflict (transaction_id) do nothing
        returning \(PaymentsStore.columns)
        """
    }
}
