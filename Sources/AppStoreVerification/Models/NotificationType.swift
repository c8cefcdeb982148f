/// `notificationType` of an App Store Server Notification V2. Unknown values
/// are kept as-is (Apple adds types over time), never rejected.
public struct NotificationType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let consumptionRequest = NotificationType(rawValue: "CONSUMPTION_REQUEST")
    public static let didChangeRenewalPref = NotificationType(rawValue: "DID_CHANGE_RENEWAL_PREF")
    public static let didChangeRenewalStatus = NotificationType(rawValue: "DID_CHANGE_RENEWAL_STATUS")
    public static let didFailToRenew = NotificationType(rawValue: "DID_FAIL_TO_RENEW")
    public static let didRenew = NotificationType(rawValue: "DID_RENEW")
    public static let expired = NotificationType(rawValue: "EXPIRED")
    public static let externalPurchaseToken = NotificationType(rawValue: "EXTERNAL_PURCHASE_TOKEN")
    public static let gracePeriodExpired = NotificationType(rawValue: "GRACE_PERIOD_EXPIRED")
    public static let metadataUpdate = NotificationType(rawValue: "METADATA_UPDATE")
    public static let migration = NotificationType(rawValue: "MIGRATION")
    public static let offerRedeemed = NotificationType(rawValue: "OFFER_REDEEMED")
    public static let oneTimeCharge = NotificationType(rawValue: "ONE_TIME_CHARGE")
    public static let priceChange = NotificationType(rawValue: "PRICE_CHANGE")
    public static let priceIncrease = NotificationType(rawValue: "PRICE_INCREASE")
    public static let refund = NotificationType(rawValue: "REFUND")
    public static let refundDeclined = NotificationType(rawValue: "REFUND_DECLINED")
    public static let refundReversed = NotificationType(rawValue: "REFUND_REVERSED")
    public static let renewalExtended = NotificationType(rawValue: "RENEWAL_EXTENDED")
    public static let renewalExtension = NotificationType(rawValue: "RENEWAL_EXTENSION")
    public static let rescindConsent = NotificationType(rawValue: "RESCIND_CONSENT")
    public static let revoke = NotificationType(rawValue: "REVOKE")
    public static let subscribed = NotificationType(rawValue: "SUBSCRIBED")
    public static let test = NotificationType(rawValue: "TEST")

    /// Every type this code knows by name.
    public static let knownValues: [NotificationType] = [
        .consumptionRequest, .didChangeRenewalPref, .didChangeRenewalStatus, .didFailToRenew, .didRenew,
        .expired, .externalPurchaseToken, .gracePeriodExpired, .metadataUpdate, .migration, .offerRedeemed,
        .oneTimeCharge, .priceChange, .priceIncrease, .refund, .refundDeclined, .refundReversed,
        .renewalExtended, .renewalExtension, .rescindConsent, .revoke, .subscribed, .test,
    ]

    public var isKnown: Bool { Self.knownValues.contains(self) }
}
