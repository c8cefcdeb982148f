/// One in-app purchase receipt (app receipt attribute type 17), with the
/// fields the crediting backend looks at. As with `AppReceipt`, nothing here
/// is trusted: Apple's signed transaction, fetched by `transactionId`, is.
///
/// Field types as Apple's "Receipt Fields" documentation gives them
/// (In-App Purchase Receipt Fields). An empty string, which receipts write
/// for fields that do not apply (e.g. a cancellation date), reads as nil.
public struct AppReceiptInAppPurchase: Sendable, Equatable {
    /// Type 1703 (UTF8STRING): the transaction identifier. Required.
    public let transactionId: String
    /// Type 1705 (UTF8STRING): the original transaction identifier (Xcode's
    /// receipts leave it out).
    public let originalTransactionId: String?
    /// Type 1702 (UTF8STRING): the product identifier.
    public let productId: String?
    /// Type 1701 (INTEGER): the number of items purchased.
    public let quantity: Int?
    /// Type 1704 (IA5STRING, interpreted as an RFC 3339 date): the purchase date.
    public let purchaseDate: AppReceiptDate?
    /// Type 1712 (IA5STRING, interpreted as an RFC 3339 date): when Apple
    /// customer support cancelled (refunded) the transaction.
    public let cancellationDate: AppReceiptDate?

    public init(
        transactionId: String, originalTransactionId: String? = nil, productId: String? = nil, quantity: Int? = nil,
        purchaseDate: AppReceiptDate? = nil, cancellationDate: AppReceiptDate? = nil
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.cancellationDate = cancellationDate
    }
}
