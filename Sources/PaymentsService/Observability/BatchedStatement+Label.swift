import Metrics

extension PaymentsStore.BatchedStatement {
    /// `statement` of `iap_saga_writes_per_commit` and `iap_saga_write_batches_failed_total`.
    var label: SagaStatementLabel {
        switch self {
        case .firstSight: .firstSight
        case .stepResult: .stepResult
        }
    }
}
