/// The arithmetic of reversing a clawback (REFUND_REVERSED): give back
/// exactly what the clawback deducted, no more (the overdue part was never taken).
struct ReversalPlan: Equatable, Sendable {
    let creditsRestored: Int64
    let balanceAfter: Int64
    let lifetimeEarnedAfter: Int64

    static func make(balance: Int64, lifetimeEarned: Int64, clawbackDeducted: Int64) throws(PointsError) -> ReversalPlan {
        guard balance >= 0, lifetimeEarned >= 0, clawbackDeducted >= 0 else {
            throw PointsError.internalFailure(detail: "negative amount in a stored row")
        }
        guard balance <= PointsLimits.balanceMax - clawbackDeducted, lifetimeEarned <= PointsLimits.balanceMax - clawbackDeducted else {
            throw PointsError.validationFailed(field: "credits", problem: "balance would exceed \(PointsLimits.balanceMax)")
        }
        return ReversalPlan(creditsRestored: clawbackDeducted, balanceAfter: balance + clawbackDeducted,
                            lifetimeEarnedAfter: lifetimeEarned + clawbackDeducted)
    }
}
