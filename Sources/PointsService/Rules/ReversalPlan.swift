/// The arithmetic of reversing a clawback (REFUND_REVERSED): give back
/// exactly what the clawback took, no more: what it deducted, and what
/// spend reversals settled of its overdue since (`OverdueSettlement`); the
/// overdue part never settled was never taken.
struct ReversalPlan: Equatable, Sendable {
    let creditsRestored: Int64
    let balanceAfter: Int64
    let lifetimeEarnedAfter: Int64
    /// The part of `creditsRestored` that spend reversals had settled.
    var overdueSettledRestored: Int64 = 0

    static func make(
        balance: Int64, lifetimeEarned: Int64, clawbackDeducted: Int64,
        overdueSettled: Int64 = 0
    ) throws(PointsError) -> ReversalPlan {
        guard balance >= 0, lifetimeEarned >= 0, clawbackDeducted >= 0, overdueSettled >= 0,
            clawbackDeducted <= PointsLimits.balanceMax, overdueSettled <= PointsLimits.balanceMax
        else {
            throw PointsError.internalFailure(detail: "negative or oversized amount in a stored row")
        }
        let restored = clawbackDeducted + overdueSettled
        guard balance <= PointsLimits.balanceMax - restored, lifetimeEarned <= PointsLimits.balanceMax - restored else {
            throw PointsError.balanceLimitReached(credits: restored)
        }
        return ReversalPlan(
            creditsRestored: restored, balanceAfter: balance + restored, lifetimeEarnedAfter: lifetimeEarned + restored,
            overdueSettledRestored: overdueSettled)
    }
}
