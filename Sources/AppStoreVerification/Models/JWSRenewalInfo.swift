import Foundation

/// A verified, decoded subscription renewal info (JWSRenewalInfoDecodedPayload).
public struct JWSRenewalInfo: Sendable, Equatable {
    public var originalTransactionId: String?
    public var autoRenewProductId: String?
    public var productId: String?
    /// 0 off, 1 on.
    public var autoRenewStatus: Int32?
    public var expirationIntent: Int32?
    public var isInBillingRetryPeriod: Bool?
    public var priceIncreaseStatus: Int32?
    public var gracePeriodExpiresDate: AppStoreTimestamp?
    public var offerType: Int32?
    public var offerIdentifier: String?
    public var signedDate: AppStoreTimestamp?
    public var environment: AppStoreEnvironment?
    public var recentSubscriptionStartDate: AppStoreTimestamp?
    public var renewalDate: AppStoreTimestamp?
    public var currency: String?
    /// Renewal price in milliunits of `currency`.
    public var renewalPrice: Int64?
    public var offerDiscountType: String?
    public var offerPeriod: String?
    public var eligibleWinBackOfferIds: [String]?
    public var appAccountToken: UUID?
    public var appTransactionId: String?
    /// The verified payload JSON exactly as signed.
    public var payloadJSON: String

    init(reader: PayloadReader, payloadJSON: String) throws(VerificationFailure) {
        originalTransactionId = try reader.string("originalTransactionId")
        autoRenewProductId = try reader.string("autoRenewProductId")
        productId = try reader.string("productId")
        autoRenewStatus = try reader.int32("autoRenewStatus")
        expirationIntent = try reader.int32("expirationIntent")
        isInBillingRetryPeriod = try reader.bool("isInBillingRetryPeriod")
        priceIncreaseStatus = try reader.int32("priceIncreaseStatus")
        gracePeriodExpiresDate = try reader.timestamp("gracePeriodExpiresDate")
        offerType = try reader.int32("offerType")
        offerIdentifier = try reader.string("offerIdentifier")
        signedDate = try reader.timestamp("signedDate")
        environment = try reader.rawValue("environment", as: AppStoreEnvironment.self)
        recentSubscriptionStartDate = try reader.timestamp("recentSubscriptionStartDate")
        renewalDate = try reader.timestamp("renewalDate")
        currency = try reader.string("currency")
        renewalPrice = try reader.int64("renewalPrice")
        offerDiscountType = try reader.string("offerDiscountType")
        offerPeriod = try reader.string("offerPeriod")
        eligibleWinBackOfferIds = try reader.stringArray("eligibleWinBackOfferIds")
        appAccountToken = try reader.uuid("appAccountToken")
        appTransactionId = try reader.string("appTransactionId")
        self.payloadJSON = payloadJSON
    }
}
