import Contracts

/// The wire message's PurchaseSource is used as it is (no field-for-field
/// copy); PointsService adds the named fields its validation and
/// fingerprint walk, and a memberwise init for tests and tools.
extension Contracts.PurchaseSource {
    init(
        source: String = "", platform: String = "", transactionId: String = "", originalTransactionId: String = "",
        environment: String = "", appStoreProductId: String = "", paymentRecordId: String = ""
    ) {
        self.init()
        self.source = source
        self.platform = platform
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.environment = environment
        self.appStoreProductId = appStoreProductId
        self.paymentRecordId = paymentRecordId
    }

    /// Field names (as in the proto) and values, in a fixed order.
    var namedFields: [(name: String, value: String)] {
        [
            ("source.source", source), ("source.platform", platform), ("source.transaction_id", transactionId),
            ("source.original_transaction_id", originalTransactionId), ("source.environment", environment),
            ("source.app_store_product_id", appStoreProductId), ("source.payment_record_id", paymentRecordId),
        ]
    }
}
