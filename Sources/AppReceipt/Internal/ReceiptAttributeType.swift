/// The receipt attribute types the reader uses, with their ASN.1 value
/// types, from Apple's "Receipt Fields" documentation (Receipt Validation
/// Programming Guide, developer.apple.com/library/archive/releasenotes/
/// General/ValidateAppStoreReceipt/Chapters/ReceiptFields.html). Types not
/// listed are ignored, as that page requires: "Keys not documented below
/// are reserved for use by Apple and must be ignored by your app."
///
/// The payload (its Listing 1-1) is
///
///     ReceiptModule DEFINITIONS ::= BEGIN
///     ReceiptAttribute ::= SEQUENCE {
///         type    INTEGER,
///         version INTEGER,
///         value   OCTET STRING
///     }
///     Payload ::= SET OF ReceiptAttribute
///     END
///
/// and an in-app purchase receipt (type 17's value, Listing 1-2) is itself
/// a DER `SET OF` the same attribute type.
enum ReceiptAttributeType {
    // App receipt fields.
    /// Bundle Identifier, UTF8STRING (JSON `bundle_id`).
    static let bundleId: Int64 = 2
    /// App Version, UTF8STRING (JSON `application_version`).
    static let appVersion: Int64 = 3
    /// Receipt Creation Date, IA5STRING interpreted as an RFC 3339 date
    /// (JSON `receipt_creation_date`): when the App Store signed the
    /// receipt, the instant its certificate chain is checked at.
    static let creationDate: Int64 = 12
    /// In-App Purchase Receipt, "SET of in-app purchase receipt attributes"
    /// (JSON `in_app`); one attribute of type 17 per purchase.
    static let inAppPurchase: Int64 = 17

    // In-app purchase receipt fields.
    /// Quantity, INTEGER (JSON `quantity`).
    static let quantity: Int64 = 1701
    /// Product Identifier, UTF8STRING (JSON `product_id`).
    static let productId: Int64 = 1702
    /// Transaction Identifier, UTF8STRING (JSON `transaction_id`).
    static let transactionId: Int64 = 1703
    /// Purchase Date, IA5STRING interpreted as an RFC 3339 date (JSON `purchase_date`).
    static let purchaseDate: Int64 = 1704
    /// Original Transaction Identifier, UTF8STRING (JSON `original_transaction_id`).
    static let originalTransactionId: Int64 = 1705
    /// Cancellation Date, IA5STRING interpreted as an RFC 3339 date (JSON
    /// `cancellation_date`); "for a transaction that was canceled by Apple
    /// customer support".
    static let cancellationDate: Int64 = 1712

    /// The in-app purchase fields `ReceiptPayloadReader` reads; others are ignored.
    static let inAppFields: Set<Int64> = [
        quantity, productId, transactionId, purchaseDate, originalTransactionId, cancellationDate,
    ]
}
