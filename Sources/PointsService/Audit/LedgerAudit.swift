import FieldRules
import Foundation
import ServiceKit

/// The audit line of every money movement PointsService decides (grant,
/// clawback, clawback reversal, spend, spend reversal, operator
/// adjustment): exactly one per call that reached a decision, with the
/// event id, the user id, the signed credits moved (+ to the user, - from
/// the user; 0 on a replay or a refusal), the balance after the call, and
/// the result: `applied`, `replayed` (the event id was done before:
/// nothing moved now) or `refused` (a business refusal such as
/// INSUFFICIENT_CREDITS or EVENT_CONFLICT, with its `reason`). Invalid
/// requests and transient failures decide nothing and write no audit line.
struct LedgerAudit: Sendable {
    /// What kind of movement.
    enum Movement: String, Sendable, CaseIterable {
        case grant
        case clawback
        case clawbackReversal = "clawback_reversal"
        case spend
        case spendReversal = "spend_reversal"
        case adjustment
    }

    /// What became of the call.
    enum Result: String, Sendable {
        case applied
        case replayed
        case refused
    }

    /// The decided figures of a call that did not fail.
    struct Figures: Sendable, Equatable {
        /// Signed: + to the user, - from the user (what the first application moved, on a replay).
        var credits: Int64
        var balanceAfter: Int64
        var replayed: Bool
    }

    /// The fixed message of every audit line PointsService writes.
    static let message = "money movement"

    let log: AuditLog

    /// The fields of one audit line (pure).
    static func fields(
        _ movement: Movement, eventId: String, userId: String, figures: Figures?, refusal: PointsError?,
        requestId: String?
    ) -> [String: String] {
        var fields = ["movement": movement.rawValue, "event_id": eventId, "user_id": canonicalUserId(userId)]
        if let figures {
            fields["result"] = (figures.replayed ? Result.replayed : Result.applied).rawValue
            // A replay moves nothing now; the first application's figure stays in `credits_first`.
            fields["credits"] = figures.replayed ? "0" : String(figures.credits)
            if figures.replayed { fields["credits_first"] = String(figures.credits) }
            fields["balance_after"] = String(figures.balanceAfter)
        } else if let refusal {
            fields["result"] = Result.refused.rawValue
            fields["credits"] = "0"
            fields["reason"] = refusal.reason.rawValue
        }
        if let requestId, !requestId.isEmpty { fields["request_id"] = requestId }
        return fields
    }

    /// Whether `error` is a decision (an audited refusal) rather than an
    /// invalid request or a failure to decide.
    static func isRefusal(_ error: PointsError) -> Bool {
        switch error {
        case .productNotFound, .eventNotFound, .starterPackIneligible, .starterPackQuantity, .insufficientCredits,
            .balanceLimitReached,
            .eventConflict:
            return true
        case .validationFailed, .databaseUnavailable, .internalFailure: return false
        }
    }

    /// Runs `body` (the store's call) and writes its one audit line: its
    /// figures when it returns, a refusal when it throws one.
    func audited<Answer>(
        _ movement: Movement, eventId: String, userId: String, requestId: String?,
        _ body: () async throws -> Answer, figures: (Answer) -> Figures
    ) async throws -> Answer {
        do {
            let answer = try await body()
            log.record(
                Self.message,
                Self.fields(
                    movement, eventId: eventId, userId: userId, figures: figures(answer), refusal: nil,
                    requestId: requestId))
            return answer
        } catch let error as PointsError where Self.isRefusal(error) {
            log.record(
                Self.message,
                Self.fields(
                    movement, eventId: eventId, userId: userId, figures: nil, refusal: error, requestId: requestId))
            throw error
        }
    }

    /// The user id as the ledger stores it (lower-case UUID text), or as
    /// given when it is not a UUID.
    private static func canonicalUserId(_ text: String) -> String {
        (try? UUIDRule.canonical(text)) ?? text
    }
}
