import Foundation

/// A verified, decoded signed transaction (Apple's JWSTransactionDecodedPayload).
/// Like Apple's model every field is optional: absence is the caller's to judge
/// (PaymentsService requires transactionId, productId, purchaseDate, ...).
public struct JWSTransaction: Sendable, Equatable {
    public var transactionId: String?
    public var originalTransactionId: String?
    public var webOrderLineItemId: String?
    public var bundleId: String?
    public var productId: String?
    public var subscriptionGroupIdentifier: String?
    public var purchaseDate: AppStoreTimestamp?
    public var originalPurchaseDate: AppStoreTimestamp?
    public var expiresDate: AppStoreTimestamp?
    public var quantity: Int32?
    public var type: TransactionType?
    public var appAccountToken: UUID?
    public var inAppOwnershipType: InAppOwnershipType?
    public var signedDate: AppStoreTimestamp?
    /// 0 = other, 1 = app issue (Apple's `revocationReason`).
    public var revocationReason: Int32?
    public var revocationDate: AppStoreTimestamp?
    /// How the purchase was revoked (full refund, prorated refund, family revoke).
    public var revocationType: RevocationType?
    /// The refunded share in milliunits (50000 = 50%), with REFUND_PRORATED.
    public var revocationPercentage: Int32?
    public var isUpgraded: Bool?
    /// 1 introductory, 2 promotional, 3 offer code, 4 win-back.
    public var offerType: Int32?
    public var offerIdentifier: String?
    public var environment: AppStoreEnvironment?
    public var storefront: String?
    public var storefrontId: String?
    /// `PURCHASE` or `RENEWAL`.
    public var transactionReason: String?
    public var currency: String?
    /// Price in milliunits of `currency`.
    public var price: Int64?
    public var offerDiscountType: String?
    public var offerPeriod: String?
    public var appTransactionId: String?
    /// The verified payload JSON exactly as signed, for audit storage.
    public var payloadJSON: String

    init(reader: PayloadReader, payloadJSON: String) throws(VerificationFailure) {
        transactionId = try reader.string("transactionId")
        originalTransactionId = try reader.string("originalTransactionId")
        webOrderLineItemId = try reader.string("webOrderLineItemId")
        bundleId = try reader.string("bundleId")
        productId = try reader.string("productId")
        subscriptionGroupIdentifier = try reader.string("subscriptionGroupIdentifier")
        purchaseDate = try reader.timestamp("purchaseDate")
        originalPurchaseDate = try reader.timestamp("originalPurchaseDate")
        expiresDate = try reader.timestamp("expiresDate")
        quantity = try reader.int32("quantity")
        type = try reader.rawValue("type", as: TransactionType.self)
        appAccountToken = try reader.uuid("appAccountToken")
        inAppOwnershipType = try reader.rawValue("inAppOwnershipType", as: InAppOwnershipType.self)
        signedDate = try reader.timestamp("signedDate")
        revocationReason = try reader.int32("revocationReason")
        revocationDate = try reader.timestamp("revocationDate")
        revocationType = try reader.rawValue("revocationType", as: RevocationType.self)
        revocationPercentage = try reader.int32("revocationPercentage")
        isUpgraded = try reader.bool("isUpgraded")
        offerType = try reader.int32("offerType")
        offerIdentifier = try reader.string("offerIdentifier")
        environment = try reader.rawValue("environment", as: AppStoreEnvironment.self)
        storefront = try reader.string("storefront")
        storefrontId = try reader.string("storefrontId")
        transactionReason = try reader.string("transactionReason")
        currency = try reader.string("currency")
        price = try reader.int64("price")
        offerDiscountType = try reader.string("offerDiscountType")
        offerPeriod = try reader.string("offerPeriod")
        appTransactionId = try reader.string("appTransactionId")
        self.payloadJSON = payloadJSON
    }
}
