import Foundation
import UUIDText

/// A request to give a spend back (points.proto ReverseSpendRequest).
public struct ReverseSpendCommand: Sendable, Equatable {
    public var eventId: String
    public var userId: String
    public var spendEventId: String

    public init(eventId: String, userId: String, spendEventId: String) {
        self.eventId = eventId
        self.userId = userId
        self.spendEventId = spendEventId
    }

    func validated() throws(PointsError) -> ValidatedSpendReversal {
        let eventId = try PointsValidation.callerEventId(eventId)
        let userId = try PointsValidation.userId(userId)
        let spendEventId = try PointsValidation.eventId(spendEventId, field: "spend_event_id")
        guard spendEventId != eventId else {
            throw PointsError.validationFailed(field: "spend_event_id", problem: "must differ from event_id")
        }
        let fingerprint = RequestFingerprint.make(
            kind: "reverse_spend.v1", fields: [UUIDText.lowercased(userId), spendEventId])
        return ValidatedSpendReversal(
            eventId: eventId, userId: userId, spendEventId: spendEventId, fingerprint: fingerprint)
    }
}

/// A spend reversal whose every field passed validation.
struct ValidatedSpendReversal: Sendable {
    let eventId: String
    let userId: UUID
    let spendEventId: String
    let fingerprint: String
}

/// What a spend reversal did (or, replayed, what its first application did).
public struct ReverseSpendResult: Sendable, Equatable {
    public let eventId: String
    public let replayed: Bool
    /// What came back to the balance: the spend, less `overdueSettled`.
    public let creditsRestored: Int64
    /// What went to a clawback still owed credits by the purchase the spend
    /// had taken them from (`OverdueSettlement`), instead of to the balance.
    public let overdueSettled: Int64
    public let balance: Int64
}
