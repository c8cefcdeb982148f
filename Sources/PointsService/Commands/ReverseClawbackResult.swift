/// The answer to a clawback reversal (first application's figures on a replay).
public struct ReverseClawbackResult: Sendable, Equatable {
    public let eventId: String
    public let replayed: Bool
    public let creditsRestored: Int64
    public let balance: Int64
}
