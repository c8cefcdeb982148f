import StrictJSON

/// Send Consumption Information (v2) body (`ConsumptionRequest`, App Store
/// Server API 1.19): `customerConsented` (Apple refuses anything but true
/// with InvalidCustomerConsentedError), `deliveryStatus`,
/// `sampleContentProvided`, optional `consumptionPercentage` in milliunits
/// (0...100000, i.e. 0-100 %), optional `refundPreference`.
public struct ConsumptionRequest: Sendable, Equatable {
    /// `deliveryStatus` values.
    public struct DeliveryStatus: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let delivered = DeliveryStatus(rawValue: "DELIVERED")
        public static let undeliveredQualityIssue = DeliveryStatus(rawValue: "UNDELIVERED_QUALITY_ISSUE")
        public static let undeliveredWrongItem = DeliveryStatus(rawValue: "UNDELIVERED_WRONG_ITEM")
        public static let undeliveredServerOutage = DeliveryStatus(rawValue: "UNDELIVERED_SERVER_OUTAGE")
        public static let undeliveredOther = DeliveryStatus(rawValue: "UNDELIVERED_OTHER")
    }

    /// `refundPreference` values.
    public struct RefundPreference: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let decline = RefundPreference(rawValue: "DECLINE")
        public static let grantFull = RefundPreference(rawValue: "GRANT_FULL")
        public static let grantProrated = RefundPreference(rawValue: "GRANT_PRORATED")
    }

    /// 100 % in milliunits.
    public static let consumptionPercentageMax = 100_000

    public var customerConsented: Bool
    public var deliveryStatus: DeliveryStatus
    public var sampleContentProvided: Bool
    public var consumptionPercentage: Int?
    public var refundPreference: RefundPreference?

    public init(
        customerConsented: Bool, deliveryStatus: DeliveryStatus, sampleContentProvided: Bool,
        consumptionPercentage: Int? = nil, refundPreference: RefundPreference? = nil
    ) {
        self.customerConsented = customerConsented
        self.deliveryStatus = deliveryStatus
        self.sampleContentProvided = sampleContentProvided
        self.consumptionPercentage = consumptionPercentage
        self.refundPreference = refundPreference
    }

    var json: JSONValue {
        var object = JSONObject()
        object.insert("customerConsented", .bool(customerConsented))
        object.insert("deliveryStatus", .string(deliveryStatus.rawValue))
        object.insert("sampleContentProvided", .bool(sampleContentProvided))
        object.insertIfPresent("consumptionPercentage", consumptionPercentage.map { .integer(Int64($0)) })
        object.insertIfPresent("refundPreference", refundPreference.map { .string($0.rawValue) })
        return .object(object)
    }
}
