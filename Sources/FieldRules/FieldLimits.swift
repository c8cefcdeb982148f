/// The size of every field FieldRules checks, in one place. The services'
/// own limits tables refer to these rather than repeat the numbers.
public enum FieldLimits {
    /// Canonical UUID text: 8-4-4-4-12 hex digits and four hyphens.
    public static let uuidTextBytes = 36
    /// An Apple transaction id: at most 32 decimal digits.
    public static let transactionIdDigitsMax = 32
    /// A product code of the catalog: at most 64 of [a-z0-9_].
    public static let productCodeBytesMax = 64
    /// An App Store product id: reverse-DNS identifiers are short.
    public static let appStoreProductIdBytesMax = 255
    /// An email hash: HMAC-SHA256 as lower-case hex.
    public static let emailHashHexDigits = 64
    /// A masked email, as stored by both services (`varchar(320)`).
    public static let emailMaskBytesMax = 320
}
