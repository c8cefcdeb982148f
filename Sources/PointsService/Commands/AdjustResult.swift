import Foundation

/// The answer to an adjustment. On a replay every field describes the first
/// application (nothing changed now).
public struct AdjustResult: Sendable, Equatable {
    public let eventId: String
    public let userId: UUID
    /// Signed, as requested.
    public let amount: Int64
    public let balanceBefore: Int64
    public let balanceAfter: Int64
    public let replayed: Bool
    public let ledgerEntryId: UUID
}
