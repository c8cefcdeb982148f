/// One call into PointsService that a transaction owes, identified exactly:
/// a step's result is applied only while the row still owes that same step
/// (compare-and-set), so a late answer can never act on a newer state.
enum LedgerStep: Equatable, Sendable, CustomStringConvertible {
    case grant
    case clawback(cycle: Int, amount: Int64, reason: String)
    case reverse(cycle: Int)

    var pendingAction: PendingAction {
        switch self {
        case .grant: .grant
        case .clawback: .clawback
        case .reverse: .reverseClawback
        }
    }

    var description: String {
        switch self {
        case .grant: "grant"
        case .clawback(let cycle, let amount, _): "clawback#\(cycle)(\(amount))"
        case .reverse(let cycle): "reverse#\(cycle)"
        }
    }
}

/// What PointsService answered for a step, when it answered for good.
/// Transient failures are not outcomes: the step stays owed and is retried.
enum StepOutcome: Equatable, Sendable {
    /// `credits`: what PointsService credited (its catalog's, which may
    /// differ from the figure claimed from a cached catalog); nil keeps the
    /// claimed figure.
    case granted(credits: Int64? = nil)
    case grantRefused(reason: String)
    case clawedBack(deducted: Int64, overdue: Int64)
    case reversed
}
