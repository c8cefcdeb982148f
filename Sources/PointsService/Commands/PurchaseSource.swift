/// Where a purchase came from (points.proto PurchaseSource); copied into the
/// ledger row's metadata.ext for audit.
public struct PurchaseSource: Sendable, Equatable {
    public var source: String
    public var platform: String
    public var transactionId: String
    public var originalTransactionId: String
    public var environment: String
    public var appStoreProductId: String
    /// apple_iap_transactions.id in PaymentsService.
    public var paymentRecordId: String

    public init(source: String = "", platform: String = "", transactionId: String = "", originalTransactionId: String = "",
                environment: String = "", appStoreProductId: String = "", paymentRecordId: String = "") {
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
        [("source.source", source), ("source.platform", platform), ("source.transaction_id", transactionId),
         ("source.original_transaction_id", originalTransactionId), ("source.environment", environment),
         ("source.app_store_product_id", appStoreProductId), ("source.payment_record_id", paymentRecordId)]
    }
}
