/// The arithmetic of crediting a purchase: balance and lifetime_earned both
/// grow by the package's credits. Pure; the store applies it under a row lock.
struct GrantPlan: Equatable, Sendable {
    let credits: Int64
    let balanceAfter: Int64
    let lifetimeEarnedAfter: Int64

    static func make(balance: Int64, lifetimeEarned: Int64, credits: Int64) throws(PointsError) -> GrantPlan {
        precondition(balance >= 0 && lifetimeEarned >= 0, "stored balances are never negative")
        guard credits > 0, credits <= PointsLimits.packageCreditsMax else {
            throw PointsError.validationFailed(field: "credits", problem: "must be 1...\(PointsLimits.packageCreditsMax)")
        }
        guard balance <= PointsLimits.balanceMax - credits, lifetimeEarned <= PointsLimits.balanceMax - credits else {
            throw PointsError.validationFailed(field: "credits", problem: "balance would exceed \(PointsLimits.balanceMax)")
        }
        return GrantPlan(credits: credits, balanceAfter: balance + credits, lifetimeEarnedAfter: lifetimeEarned + credits)
    }
}
