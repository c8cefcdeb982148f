import Foundation

/// What a spend did (or, replayed, what its first application did).
public struct SpendResult: Sendable, Equatable {
    public let eventId: String
    public let replayed: Bool
    public let amount: Int64
    public let balanceAfter: Int64
    public let balance: Int64
    public let ledgerEntryId: UUID
    /// The credits' sources, oldest first.
    let attributions: [LotShare]
}
