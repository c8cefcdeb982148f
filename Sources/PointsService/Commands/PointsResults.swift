import Foundation

/// The answer to a grant; on a replay every field but `balance` describes the first application.
public struct GrantResult: Sendable, Equatable {
    public let eventId: String
    public let replayed: Bool
    public let creditsAdded: Int64
    /// The balance right after the first application.
    public let balanceAfter: Int64
    /// The balance now.
    public let balance: Int64
    public let ledgerEntryId: UUID
}

/// The answer to a clawback (first application's figures on a replay).
public struct ClawbackResult: Sendable, Equatable {
    public let eventId: String
    public let replayed: Bool
    public let creditsDeducted: Int64
    public let overdueAmount: Int64
    /// True when the balance could not cover the purchase.
    public var partial: Bool { overdueAmount > 0 }
    public let balance: Int64
}

/// The answer to a clawback reversal (first application's figures on a replay).
public struct ReverseClawbackResult: Sendable, Equatable {
    public let eventId: String
    public let replayed: Bool
    public let creditsRestored: Int64
    public let balance: Int64
}

/// A user's balance; a user never seen has zeros.
public struct PointsBalance: Sendable, Equatable {
    public let userId: UUID
    public let balance: Int64
    public let lifetimeEarned: Int64
    public let lifetimeSpent: Int64
}

/// The packages one identity may buy.
public struct PackageListing: Sendable, Equatable {
    public let packages: [CreditPackage]
    public let starterPackPurchased: Bool
}

/// One ledger row as shown to support and audit.
public struct LedgerEntry: Sendable, Equatable {
    public let id: UUID
    public let eventId: String
    public let changeType: String
    public let direction: Int32
    public let amount: Int64
    public let balanceAfter: Int64
    public let bizType: String
    public let bizId: String
    public let metadataJSON: String
    public let createdAtUnixMilliseconds: Int64
}

/// One page of a user's ledger, newest first; an empty token means the end.
public struct LedgerPage: Sendable, Equatable {
    public let entries: [LedgerEntry]
    public let nextPageToken: String
}
