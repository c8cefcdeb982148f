import Foundation

/// A user's balance; a user never seen has zeros.
public struct PointsBalance: Sendable, Equatable {
    public let userId: UUID
    public let balance: Int64
    public let lifetimeEarned: Int64
    public let lifetimeSpent: Int64
}
