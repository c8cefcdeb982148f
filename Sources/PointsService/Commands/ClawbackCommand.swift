import Foundation

/// A request to take a purchase's credits back (points.proto ClawbackRequest).
public struct ClawbackCommand: Sendable, Equatable {
    public var eventId: String
    public var userId: String
    /// The purchase's event id, e.g. "payment.apple_iap:2000000847061981".
    public var originalEventId: String
    public var bizId: String
    /// Apple's revocation reason or notification type.
    public var reason: String

    public init(eventId: String, userId: String, originalEventId: String, bizId: String, reason: String = "") {
        self.eventId = eventId
        self.userId = userId
        self.originalEventId = originalEventId
        self.bizId = bizId
        self.reason = reason
    }

    func validated() throws(PointsError) -> ValidatedClawback {
        let eventId = try PointsValidation.eventId(eventId)
        let userId = try PointsValidation.userId(userId)
        let originalEventId = try PointsValidation.eventId(originalEventId, field: "original_event_id")
        let bizId = try PointsValidation.text(bizId, field: "biz_id", maxBytes: PointsLimits.bizIdBytesMax, required: true)
        let reason = try PointsValidation.text(reason, field: "reason", maxBytes: PointsLimits.reasonBytesMax, required: false)
        guard originalEventId != eventId else {
            throw PointsError.validationFailed(field: "original_event_id", problem: "must differ from event_id")
        }
        let fingerprint = RequestFingerprint.make(
            kind: "clawback.v1", fields: [userId.uuidString.lowercased(), originalEventId, bizId, reason])
        return ValidatedClawback(eventId: eventId, userId: userId, originalEventId: originalEventId, bizId: bizId,
                                 reason: reason, fingerprint: fingerprint)
    }
}

/// A clawback whose every field passed validation.
struct ValidatedClawback: Sendable {
    let eventId: String
    let userId: UUID
    let originalEventId: String
    let bizId: String
    let reason: String
    let fingerprint: String
}
