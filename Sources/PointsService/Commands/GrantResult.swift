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
