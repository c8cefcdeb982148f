/// The user's credits (GET /api/v1/points/balance).
public struct CreditBalance: Sendable, Hashable, Codable {
    public let balance: Int64
    public let lifetimeEarned: Int64
    public let lifetimeSpent: Int64

    public init(balance: Int64, lifetimeEarned: Int64, lifetimeSpent: Int64) {
        self.balance = balance
        self.lifetimeEarned = lifetimeEarned
        self.lifetimeSpent = lifetimeSpent
    }
}
