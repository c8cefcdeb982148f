/// Get Transaction History (v2) filters and order, sent as query
/// parameters (`startDate`, `endDate` in UNIX milliseconds, purchaseDate in
/// [startDate, endDate); `productId`, `productType` and
/// `subscriptionGroupIdentifier` repeatable; `sort`; `revoked`: true = only
/// revoked, false = only not revoked; `inAppOwnershipType`). Follow-up pages
/// must repeat the same filters with the `revision`; the pagination
/// helpers do.
public struct TransactionHistoryQuery: Sendable, Equatable {
    /// `productType` values.
    public struct ProductType: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let autoRenewable = ProductType(rawValue: "AUTO_RENEWABLE")
        public static let nonRenewable = ProductType(rawValue: "NON_RENEWABLE")
        public static let consumable = ProductType(rawValue: "CONSUMABLE")
        public static let nonConsumable = ProductType(rawValue: "NON_CONSUMABLE")
    }

    public enum Sort: String, Sendable {
        case ascending = "ASCENDING"
        case descending = "DESCENDING"
    }

    public var startDate: Int64?
    public var endDate: Int64?
    public var productIds: [String]
    public var productTypes: [ProductType]
    public var subscriptionGroupIdentifiers: [String]
    public var sort: Sort?
    public var revoked: Bool?
    /// "FAMILY_SHARED" or "PURCHASED".
    public var inAppOwnershipType: String?

    public init(
        startDate: Int64? = nil, endDate: Int64? = nil, productIds: [String] = [], productTypes: [ProductType] = [],
        subscriptionGroupIdentifiers: [String] = [], sort: Sort? = nil, revoked: Bool? = nil,
        inAppOwnershipType: String? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.productIds = productIds
        self.productTypes = productTypes
        self.subscriptionGroupIdentifiers = subscriptionGroupIdentifiers
        self.sort = sort
        self.revoked = revoked
        self.inAppOwnershipType = inAppOwnershipType
    }

    /// The query parameters, in a fixed order, `revision` first when given.
    func parameters(revision: String?) -> [(String, String)] {
        var query: [(String, String)] = []
        if let revision { query.append(("revision", revision)) }
        if let startDate { query.append(("startDate", String(startDate))) }
        if let endDate { query.append(("endDate", String(endDate))) }
        for id in productIds { query.append(("productId", id)) }
        for type in productTypes { query.append(("productType", type.rawValue)) }
        if let sort { query.append(("sort", sort.rawValue)) }
        for group in subscriptionGroupIdentifiers { query.append(("subscriptionGroupIdentifier", group)) }
        if let inAppOwnershipType { query.append(("inAppOwnershipType", inAppOwnershipType)) }
        if let revoked { query.append(("revoked", revoked ? "true" : "false")) }
        return query
    }
}
