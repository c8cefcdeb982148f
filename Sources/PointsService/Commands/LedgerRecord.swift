import Foundation

/// One ledger row as ListLedger shows it (support, audit, the user's history).
public struct LedgerRecord: Sendable, Equatable {
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
