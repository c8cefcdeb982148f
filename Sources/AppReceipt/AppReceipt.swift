/// What a StoreKit 1 app receipt says, read locally from the base64 the app
/// sends (`Bundle.main.appStoreReceiptURL`'s bytes): the bundle id, the app
/// version, and the in-app purchase receipts.
///
/// **Nothing here is trusted for crediting.** The reader does not check the
/// PKCS#7 signature or Apple's certificate chain (a caller does that with
/// `AppStoreVerification.AppReceiptSignatureVerifier` over the same bytes,
/// at `creationDate`), so what it returns may say anything. The
/// transaction ids only say what to ask Apple: each one is looked up with
/// the App Store Server API (Get Transaction Info) and only Apple's signed
/// answer, verified by
/// `SignedDataVerifier`, decides what is credited. A caller validates each
/// id with `FieldRules.TransactionIDRule` before it builds a request with it.
public struct AppReceipt: Sendable, Equatable {
    /// Attribute type 2 (UTF8STRING): the app's CFBundleIdentifier.
    public let bundleId: String
    /// Attribute type 3 (UTF8STRING): CFBundleVersion on iOS; nil when absent.
    public let appVersion: String?
    /// Attribute type 12 (IA5STRING, RFC 3339): when the App Store signed
    /// the receipt; nil when absent. The receipt's certificate chain is
    /// checked at this instant (`AppReceiptSignatureVerifier`).
    public let creationDate: AppReceiptDate?
    /// Attribute type 17, one per in-app purchase receipt, in receipt order,
    /// duplicates included.
    public let inAppPurchases: [AppReceiptInAppPurchase]
    /// The in-app purchases' transaction ids without repeats, in the order
    /// of their first appearance: what to ask Apple about.
    public let transactionIds: [String]
    /// The original transaction ids present, without repeats, in the order
    /// of their first appearance (a subscription's renewals share one).
    public let originalTransactionIds: [String]

    public init(
        bundleId: String, appVersion: String?, creationDate: AppReceiptDate? = nil,
        inAppPurchases: [AppReceiptInAppPurchase]
    ) {
        self.bundleId = bundleId
        self.appVersion = appVersion
        self.creationDate = creationDate
        self.inAppPurchases = inAppPurchases
        self.transactionIds = Self.firstOccurrences(inAppPurchases.map(\.transactionId))
        self.originalTransactionIds = Self.firstOccurrences(inAppPurchases.compactMap(\.originalTransactionId))
    }

    private static func firstOccurrences(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }
}
