/// Every bound the receipt reader applies, in one place. A receipt that
/// exceeds one is refused with a typed error (`tooLarge`, `tooDeep`,
/// `tooMany`, `fieldTooLong`), never read in part.
///
/// The sizes leave room for real receipts: an in-app purchase receipt is
/// about 300-400 bytes, so 1,000 of them (a weekly subscription renewed for
/// years, plus non-consumables) fit in 512 KiB with Apple's certificates.
public enum AppReceiptLimits {
    /// Default largest decoded receipt accepted, in bytes. Callers with a
    /// smaller budget (a request body) pass their own to `AppReceiptReader`.
    public static let receiptBytesMaxDefault = 512 * 1024
    /// Deepest nesting of ASN.1 elements, counted from the outer ContentInfo
    /// (1) through the payload inside it: the payload SET is at 7, an in-app
    /// purchase's field values at 13 (one more where a string is split).
    /// Bounds recursion and the work of finding where an indefinite-length
    /// element ends (only the elements on the way to the payload are read).
    public static let depthMax = 24
    /// Most attributes in the payload's top-level SET (Apple writes about 20
    /// plus one per in-app purchase).
    public static let payloadAttributesMax = 1_100
    /// Most in-app purchase receipts (attribute type 17) in one receipt.
    public static let inAppPurchasesMax = 1_000
    /// Most attributes in one in-app purchase receipt (Apple writes about 15).
    public static let inAppAttributesMax = 128
    /// Most elements in the CMS SignedData SEQUENCE (RFC 5652 has six).
    public static let signedDataFieldsMax = 6
    /// Longest bundle id, app version and product id, in UTF-8 bytes.
    public static let textBytesMax = 255
    /// Longest transaction id and original transaction id, in bytes (Apple's
    /// are 15-16 digits today).
    public static let transactionIdBytesMax = 64
    /// Longest date text (RFC 3339; 20 bytes as Apple writes it).
    public static let dateBytesMax = 64
    /// Longest length field of an element: 4 bytes say up to 4 GiB, far past
    /// `receiptBytesMaxDefault`; longer ones are refused (`lengthOverflow`).
    public static let lengthOctetsMax = 4
    /// Longest tag number in the high-tag-number form, in base-128 octets.
    public static let tagNumberOctetsMax = 4
    /// Longest INTEGER read as a number (attribute types, versions, quantity).
    public static let integerBytesMax = 8

    /// The longest base64 text whose decoding can fit in `receiptBytes` bytes.
    public static func base64BytesMax(receiptBytes: Int) -> Int {
        (receiptBytes + 2) / 3 * 4
    }
}
