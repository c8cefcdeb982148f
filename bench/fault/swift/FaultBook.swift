import Foundation
import Synchronization

/// Everything the driver sent and every answer it got, shared by the
/// workers. The checks compare the databases with this record.
final class FaultBook: Sendable {
    struct Purchase {
        let transactionId: String
        let userIndex: Int
        let purchaseMilliseconds: Int64
        let body: String
        var answers: [String] = []
        /// Answered granted or already_granted at least once.
        var credited = false
        /// The last answer asks for a resubmission.
        var outstanding = true
        var refundBody: String?
        var refundAnswers: [String] = []
        var refundAccepted = false
    }

    struct Spend {
        let eventId: String
        let userIndex: Int
        var answers: [String] = []
        /// "ok", "insufficient", or "unknown" while no final answer came.
        var outcome = "unknown"
    }

    private struct State {
        var purchases: [Purchase] = []
        var spends: [Spend] = []
        var refundCursor = 0
        var creditedUsers: [Int] = []
        var tally: [String: Int] = [:]
        var unexpected: [String] = []
    }

    private let state = Mutex(State())

    var purchaseCount: Int { state.withLock { $0.purchases.count } }

    func addPurchase(_ purchase: Purchase) -> Int? {
        state.withLock { state in
            guard state.purchases.count < FaultLimits.purchasesMax else { return nil }
            state.purchases.append(purchase)
            return state.purchases.count - 1
        }
    }

    func purchase(_ index: Int) -> Purchase { state.withLock { $0.purchases[index] } }

    /// An earlier purchase to submit again: spread over the whole history.
    func duplicateIndex(counter: Int) -> Int? {
        state.withLock { state in state.purchases.isEmpty ? nil : (counter &* 7919) % state.purchases.count }
    }

    /// The oldest credited purchase not refunded yet; marks it as refunded with `body`.
    func takeForRefund(makeBody: (Purchase) throws -> String) rethrows -> Int? {
        try state.withLock { state in
            while state.refundCursor < state.purchases.count {
                let index = state.refundCursor
                state.refundCursor += 1
                if state.purchases[index].credited && state.purchases[index].refundBody == nil {
                    state.purchases[index].refundBody = try makeBody(state.purchases[index])
                    return index
                }
            }
            return nil
        }
    }

    /// A user who was credited at least once, for a spend.
    func spendUser(counter: Int) -> Int? {
        state.withLock { state in
            state.creditedUsers.isEmpty ? nil : state.creditedUsers[(counter &* 31) % state.creditedUsers.count]
        }
    }

    func recordVerify(_ index: Int, _ answer: FaultAnswer, kind: String) {
        state.withLock { state in
            state.purchases[index].answers.append(answer.label)
            Self.count(&state, "\(kind) \(answer.tallyLabel)", answer)
            var purchase = state.purchases[index]
            if answer == .granted || answer == .alreadyGranted {
                if !purchase.credited { state.creditedUsers.append(purchase.userIndex) }
                purchase.credited = true
            }
            if answer == .revoked && purchase.refundBody == nil {
                Self.noteUnexpected(
                    &state, "transaction \(purchase.transactionId) answered revoked, but no refund was sent")
            }
            purchase.outstanding = answer.mustResubmit && !purchase.credited
            state.purchases[index] = purchase
        }
    }

    func recordRefund(_ index: Int, _ answer: FaultAnswer) {
        state.withLock { state in
            state.purchases[index].refundAnswers.append(answer.label)
            Self.count(&state, "refund \(answer.tallyLabel)", answer)
            if answer == .accepted { state.purchases[index].refundAccepted = true }
        }
    }

    func addSpend(_ spend: Spend) -> Int {
        state.withLock { state in
            state.spends.append(spend)
            return state.spends.count - 1
        }
    }

    func spend(_ index: Int) -> Spend { state.withLock { $0.spends[index] } }

    func recordSpend(_ index: Int, _ answer: FaultAnswer) {
        state.withLock { state in
            state.spends[index].answers.append(answer.label)
            Self.count(&state, "spend \(answer.tallyLabel)", answer)
            switch answer {
            case .accepted: state.spends[index].outcome = "ok"
            case .insufficient: state.spends[index].outcome = "insufficient"
            default: break
            }
        }
    }

    /// What still needs a resubmission: purchases, refunds, spends.
    func outstanding() -> (purchases: [Int], refunds: [Int], spends: [Int]) {
        state.withLock { state in
            (
                state.purchases.indices.filter { state.purchases[$0].outstanding },
                state.purchases.indices.filter {
                    state.purchases[$0].refundBody != nil && !state.purchases[$0].refundAccepted
                },
                state.spends.indices.filter { state.spends[$0].outcome == "unknown" }
            )
        }
    }

    var unexpected: [String] { state.withLock { $0.unexpected } }
    var tally: [String: Int] { state.withLock { $0.tally } }

    /// purchases.tsv and spends.tsv for the checks (no tokens, no signed data).
    /// `forgetOne` drops the first credited purchase: the deliberate mutation.
    func write(to directory: String, users: [FaultUser], forgetOne: Bool) throws {
        let (purchases, spends) = state.withLock { ($0.purchases, $0.spends) }
        var text = ""
        var forgotten = !forgetOne
        for purchase in purchases {
            if !forgotten && purchase.credited { forgotten = true; continue }
            let refund = purchase.refundBody == nil ? "none" : (purchase.refundAccepted ? "accepted" : "outstanding")
            let outcome = purchase.credited ? "credited" : (purchase.outstanding ? "outstanding" : "refused")
            text +=
                "\(purchase.transactionId)\t\(users[purchase.userIndex].id)\t\(outcome)\t\(refund)\t"
                + "\(purchase.answers.joined(separator: ","))\n"
        }
        try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "/purchases.tsv"))
        text = ""
        for spend in spends {
            text +=
                "\(spend.eventId)\t\(users[spend.userIndex].id)\t\(spend.outcome)\t\(spend.answers.joined(separator: ","))\n"
        }
        try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "/spends.tsv"))
    }

    private static func count(_ state: inout State, _ key: String, _ answer: FaultAnswer) {
        state.tally[key, default: 0] += 1
        if case .unexpected(let what) = answer {
            noteUnexpected(&state, "\(key.split(separator: " ").first ?? ""): \(what)")
        }
    }

    private static func noteUnexpected(_ state: inout State, _ text: String) {
        if state.unexpected.count < 50 { state.unexpected.append(text) }
    }
}
