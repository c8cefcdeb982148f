@testable import PaymentsService
import TestSupport

/// Answers PointsService could give for a saga step, drawn at random: the
/// store tests apply them to twin rows through two paths.
enum StepOutcomeSamples {
    static func outcome(of step: LedgerStep, _ random: inout SeededRandom) -> StepOutcome {
        switch step {
        case .grant:
            return random.next(upTo: 5) == 0 ? .grantRefused(reason: "STARTER_PACK_INELIGIBLE") : .granted()
        case .clawback(_, let amount, _):
            let deducted = random.next(upTo: 2) == 0 ? amount : amount / 2
            return .clawedBack(deducted: deducted, overdue: amount - deducted)
        case .reverse:
            return .reversed
        }
    }
}
