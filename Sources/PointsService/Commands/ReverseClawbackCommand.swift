import Foundation
import UUIDText

/// A request to give back what a clawback took (points.proto ReverseClawbackRequest).
public struct ReverseClawbackCommand: Sendable, Equatable {
    public var eventId: String
    public var userId: String
    /// The clawback's event id, e.g. "refund.apple_iap:2000000847061981".
    public var clawbackEventId: String
    public var bizId: String

    public init(eventId: String, userId: String, clawbackEventId: String, bizId: String) {
        self.eventId = eventId
        self.userId = userId
        self.clawbackEventId = clawbackEventId
        self.bizId = bizId
    }

    func validated() throws(PointsError) -> ValidatedReversal {
        let eventId = try PointsValidation.eventId(eventId)
        let userId = try PointsValidation.userId(userId)
        let clawbackEventId = try PointsValidation.eventId(clawbackEventId, field: "clawback_event_id")
        let bizId = try PointsValidation.text(
            bizId, field: "biz_id", maxBytes: PointsLimits.bizIdBytesMax, required: true)
        guard clawbackEventId != eventId else {
            throw PointsError.validationFailed(field: "clawback_event_id", problem: "must differ from event_id")
        }
        let fingerprint = RequestFingerprint.make(
            kind: "reverse_clawback.v1", fields: [UUIDText.lowercased(userId), clawbackEventId, bizId])
        return ValidatedReversal(
            eventId: eventId, userId: userId, clawbackEventId: clawbackEventId, bizId: bizId,
            fingerprint: fingerprint)
    }
}

/// A clawback reversal whose every field passed validation.
struct ValidatedReversal: Sendable {
    let eventId: String
    let userId: UUID
    let clawbackEventId: String
    let bizId: String
    let fingerprint: String
}
