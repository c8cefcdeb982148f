// Swift faces of Protos/points/v1/points.proto. One property per proto field
// (camelCase of the field name); field meanings are documented in the proto.

/// `points.v1.PackageKind`.
public struct PackageKind: ProtobufEnum {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public static let unspecified = Self(rawValue: 0)
    public static let starter = Self(rawValue: 1)
    public static let regular = Self(rawValue: 2)
}

/// `points.v1.Package`: one entry of the package catalog.
public struct Package: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.Package"
    public var productCode = ""
    public var appStoreProductId = ""
    public var kind = PackageKind.unspecified
    public var credits: Int64 = 0
    public var displayName = ""
    public var referencePrice = ""
    public var referenceCurrency = ""
    public var sortOrder: Int32 = 0
    public init() {}
}

/// `points.v1.GetBalanceRequest`.
public struct GetBalanceRequest: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.GetBalanceRequest"
    public var userId = ""
    public init() {}
}

/// `points.v1.GetBalanceResponse`.
public struct GetBalanceResponse: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.GetBalanceResponse"
    public var userId = ""
    public var balance: Int64 = 0
    public var lifetimeEarned: Int64 = 0
    public var lifetimeSpent: Int64 = 0
    public init() {}
}

/// `points.v1.GetBalancesRequest`: several users' balances in one call.
public struct GetBalancesRequest: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.GetBalancesRequest"
    public var userIds: [String] = []
    public init() {}
}

/// `points.v1.GetBalancesResponse`: one balance per requested id, in order.
public struct GetBalancesResponse: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.GetBalancesResponse"
    public var balances: [GetBalanceResponse] = []
    public init() {}
}

/// `points.v1.ListPackagesRequest`.
public struct ListPackagesRequest: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.ListPackagesRequest"
    public var userId = ""
    public var emailHash = ""
    public init() {}
}

/// `points.v1.ListPackagesResponse`.
public struct ListPackagesResponse: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.ListPackagesResponse"
    public var packages: [Package] = []
    public var starterPackPurchased = false
    public init() {}
}

/// `points.v1.GetCatalogRequest`.
public struct GetCatalogRequest: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.GetCatalogRequest"
    public init() {}
}

/// `points.v1.GetCatalogResponse`.
public struct GetCatalogResponse: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.GetCatalogResponse"
    public var packages: [Package] = []
    public init() {}
}

/// `points.v1.PurchaseSource`: where a purchase came from.
public struct PurchaseSource: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.PurchaseSource"
    public var source = ""
    public var platform = ""
    public var transactionId = ""
    public var originalTransactionId = ""
    public var environment = ""
    public var appStoreProductId = ""
    public var paymentRecordId = ""
    public init() {}
}

/// `points.v1.GrantRequest`.
public struct GrantRequest: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.GrantRequest"
    public var eventId = ""
    public var userId = ""
    public var emailHash = ""
    public var productCode = ""
    public var bizId = ""
    public var source: PurchaseSource?
    public var emailMasked = ""
    public var quantity: Int32 = 0
    public init() {}
}

/// `points.v1.GrantResponse`.
public struct GrantResponse: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.GrantResponse"
    public var eventId = ""
    public var replayed = false
    public var creditsAdded: Int64 = 0
    public var balanceAfter: Int64 = 0
    public var balance: Int64 = 0
    public var ledgerEntryId = ""
    public init() {}
}

/// `points.v1.ClawbackRequest`.
public struct ClawbackRequest: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.ClawbackRequest"
    public var eventId = ""
    public var userId = ""
    public var originalEventId = ""
    public var bizId = ""
    public var reason = ""
    public var amount: Int64 = 0
    public init() {}
}

/// `points.v1.ClawbackResponse`.
public struct ClawbackResponse: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.ClawbackResponse"
    public var eventId = ""
    public var replayed = false
    public var creditsDeducted: Int64 = 0
    public var overdueAmount: Int64 = 0
    public var partial = false
    public var balance: Int64 = 0
    public init() {}
}

/// `points.v1.ReverseClawbackRequest`.
public struct ReverseClawbackRequest: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.ReverseClawbackRequest"
    public var eventId = ""
    public var userId = ""
    public var clawbackEventId = ""
    public var bizId = ""
    public init() {}
}

/// `points.v1.ReverseClawbackResponse`.
public struct ReverseClawbackResponse: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.ReverseClawbackResponse"
    public var eventId = ""
    public var replayed = false
    public var creditsRestored: Int64 = 0
    public var balance: Int64 = 0
    public init() {}
}

/// `points.v1.ListLedgerRequest`.
public struct ListLedgerRequest: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.ListLedgerRequest"
    public var userId = ""
    public var pageSize: Int32 = 0
    public var pageToken = ""
    public init() {}
}

/// `points.v1.LedgerEntry`: one row of a user's ledger.
public struct LedgerEntry: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.LedgerEntry"
    public var id = ""
    public var eventId = ""
    public var changeType = ""
    public var direction: Int32 = 0
    public var amount: Int64 = 0
    public var balanceAfter: Int64 = 0
    public var bizType = ""
    public var bizId = ""
    public var metadataJson = ""
    public var createdAtUnixMs: Int64 = 0
    public init() {}
}

/// `points.v1.ListLedgerResponse`.
public struct ListLedgerResponse: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.ListLedgerResponse"
    public var entries: [LedgerEntry] = []
    public var nextPageToken = ""
    public init() {}
}

/// `points.v1.SpendRequest`.
public struct SpendRequest: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.SpendRequest"
    public var eventId = ""
    public var userId = ""
    public var amount: Int64 = 0
    public var bizType = ""
    public var bizId = ""
    public var metadataJson = ""
    public init() {}
}

/// `points.v1.SpendAttribution`: credits of one source a spend used.
public struct SpendAttribution: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.SpendAttribution"
    public var sourceEventId = ""
    public var amount: Int64 = 0
    public init() {}
}

/// `points.v1.SpendResponse`.
public struct SpendResponse: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.SpendResponse"
    public var eventId = ""
    public var replayed = false
    public var amount: Int64 = 0
    public var balanceAfter: Int64 = 0
    public var balance: Int64 = 0
    public var ledgerEntryId = ""
    public var attributions: [SpendAttribution] = []
    public init() {}
}

/// `points.v1.ReverseSpendRequest`.
public struct ReverseSpendRequest: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.ReverseSpendRequest"
    public var eventId = ""
    public var userId = ""
    public var spendEventId = ""
    public init() {}
}

/// `points.v1.ReverseSpendResponse`.
public struct ReverseSpendResponse: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.ReverseSpendResponse"
    public var eventId = ""
    public var replayed = false
    public var creditsRestored: Int64 = 0
    public var balance: Int64 = 0
    public var overdueSettled: Int64 = 0
    public init() {}
}

/// `points.v1.GetPurchaseConsumptionRequest`.
public struct GetPurchaseConsumptionRequest: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.GetPurchaseConsumptionRequest"
    public var userId = ""
    public var purchaseEventId = ""
    public init() {}
}

/// `points.v1.GetPurchaseConsumptionResponse`: one purchase's credit lot.
public struct GetPurchaseConsumptionResponse: ProtobufMessage, Equatable {
    public static let protobufName = "points.v1.GetPurchaseConsumptionResponse"
    public var found = false
    public var credited: Int64 = 0
    public var spent: Int64 = 0
    public var remaining: Int64 = 0
    public var clawedBack: Int64 = 0
    public init() {}
}
