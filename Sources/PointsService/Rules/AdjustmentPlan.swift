/// The arithmetic of an operator's adjustment (`PointsService adjust`): the
/// signed amount moves the balance and lifetime_earned together (an
/// adjustment is earning, or taking earnings back, never spending), so
/// lifetime_earned stays the signed sum of the non-consume rows. A negative
/// adjustment may not take more than the balance holds.
struct AdjustmentPlan: Equatable, Sendable {
    let balanceBefore: Int64
    let balanceAfter: Int64
    let lifetimeEarnedAfter: Int64

    static func make(balance: Int64, lifetimeEarned: Int64, amount: Int64) throws(PointsError) -> AdjustmentPlan {
        guard balance >= 0, lifetimeEarned >= 0 else {
            throw PointsError.internalFailure(detail: "negative stored balance")
        }
        guard amount != 0, amount >= -PointsLimits.balanceMax, amount <= PointsLimits.balanceMax else {
            throw PointsError.validationFailed(
                field: "amount",
                problem: "must be a non-zero integer in -\(PointsLimits.balanceMax)...\(PointsLimits.balanceMax)")
        }
        if amount < 0 {
            // lifetime_earned >= balance (it is balance + lifetime_spent), so it stays >= 0 too.
            guard -amount <= balance, -amount <= lifetimeEarned else {
                throw PointsError.validationFailed(
                    field: "amount", problem: "takes \(-amount) but the balance holds only \(balance)")
            }
        } else {
            guard balance <= PointsLimits.balanceMax - amount, lifetimeEarned <= PointsLimits.balanceMax - amount else {
                throw PointsError.validationFailed(
                    field: "amount", problem: "balance would exceed \(PointsLimits.balanceMax)")
            }
        }
        let plan = AdjustmentPlan(
            balanceBefore: balance, balanceAfter: balance + amount, lifetimeEarnedAfter: lifetimeEarned + amount)
        assert(plan.balanceAfter >= 0 && plan.lifetimeEarnedAfter >= 0)
        return plan
    }
}
