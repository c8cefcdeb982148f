/// The answer to a clawback (first application's figures on a replay).
public struct ClawbackResult: Sendable, Equatable {
    public let eventId: String
    public let replayed: Bool
    public let creditsDeducted: Int64
    public let overdueAmount: Int64
    /// True when the balance could not cover the amount taken back.
    public var partial: Bool { overdueAmount > 0 }
    public let balance: Int64
}
