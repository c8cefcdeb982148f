/// The arithmetic of taking a purchase back
/// (docs/protocols/payments/apple-iap-protocol.md, 5.3): deduct what the user
/// still holds, up to the amount being taken back (all of the purchase's
/// credits, or part of them for a prorated refund), never going below zero;
/// the rest is overdue. lifetime_earned shrinks by what was actually deducted.
struct ClawbackPlan: Equatable, Sendable {
    let creditsDeducted: Int64
    let overdueAmount: Int64
    let balanceAfter: Int64
    let lifetimeEarnedAfter: Int64

    /// True when the balance could not cover the amount (refunded_insufficient).
    var isPartial: Bool { overdueAmount > 0 }

    /// What a clawback takes back: `requested` 0 means all of the purchase's
    /// credits; otherwise 1...purchaseCredits (a refund never takes back more
    /// than the purchase gave).
    static func amountToTakeBack(requested: Int64, purchaseCredits: Int64) throws(PointsError) -> Int64 {
        guard purchaseCredits >= 0 else {
            throw PointsError.internalFailure(detail: "negative purchase amount in a stored row")
        }
        if requested == 0 { return purchaseCredits }
        guard requested > 0, requested <= purchaseCredits else {
            throw PointsError.validationFailed(
                field: "amount", problem: "must be 0 (all of the purchase) or 1...the purchase's credits")
        }
        return requested
    }

    /// `amount` is what to take back (see `amountToTakeBack`).
    static func make(balance: Int64, lifetimeEarned: Int64, amount: Int64) throws(PointsError) -> ClawbackPlan {
        guard balance >= 0, lifetimeEarned >= 0 else {
            throw PointsError.internalFailure(detail: "negative stored balance")
        }
        guard amount >= 0, amount <= PointsLimits.balanceMax else {
            throw PointsError.validationFailed(field: "amount", problem: "must be 0...\(PointsLimits.balanceMax)")
        }
        let deducted = min(balance, amount)
        // lifetime_earned >= balance holds while nothing is spent; min() keeps it non-negative regardless.
        let earnedAfter = lifetimeEarned - min(lifetimeEarned, deducted)
        let plan = ClawbackPlan(
            creditsDeducted: deducted, overdueAmount: amount - deducted,
            balanceAfter: balance - deducted, lifetimeEarnedAfter: earnedAfter)
        assert(plan.balanceAfter >= 0 && plan.creditsDeducted + plan.overdueAmount == amount)
        return plan
    }
}
