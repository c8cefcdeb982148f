/// The arithmetic of taking a purchase back (PRD 7.4): deduct what the user
/// still holds, up to the purchase's credits, never going below zero; the
/// rest is overdue. lifetime_earned shrinks by what was actually deducted.
struct ClawbackPlan: Equatable, Sendable {
    let creditsDeducted: Int64
    let overdueAmount: Int64
    let balanceAfter: Int64
    let lifetimeEarnedAfter: Int64

    /// True when the balance could not cover the purchase (refunded_insufficient).
    var isPartial: Bool { overdueAmount > 0 }

    static func make(balance: Int64, lifetimeEarned: Int64, purchaseCredits: Int64) throws(PointsError) -> ClawbackPlan {
        guard balance >= 0, lifetimeEarned >= 0 else {
            throw PointsError.internalFailure(detail: "negative stored balance")
        }
        guard purchaseCredits >= 0, purchaseCredits <= PointsLimits.balanceMax else {
            throw PointsError.validationFailed(field: "credits", problem: "must be 0...\(PointsLimits.balanceMax)")
        }
        let deducted = min(balance, purchaseCredits)
        // lifetime_earned >= balance holds while nothing is spent; min() keeps it non-negative regardless.
        let earnedAfter = lifetimeEarned - min(lifetimeEarned, deducted)
        let plan = ClawbackPlan(creditsDeducted: deducted, overdueAmount: purchaseCredits - deducted,
                                balanceAfter: balance - deducted, lifetimeEarnedAfter: earnedAfter)
        assert(plan.balanceAfter >= 0 && plan.creditsDeducted + plan.overdueAmount == purchaseCredits)
        return plan
    }
}
