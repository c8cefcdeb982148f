import Foundation
import UUIDText

/// A request to take a purchase's credits back (points.proto ClawbackRequest).
public struct ClawbackCommand: Sendable, Equatable {
    public var eventId: String
    public var userId: String
    /// The purchase's event id, e.g. "payment.apple_iap:2000000847061981".
    public var originalEventId: String
    public var bizId: String
    /// Apple's revocation reason or notification type.
    public var reason: String
    /// Credits to take back (a prorated refund takes back part); 0 means all
    /// of the purchase's credits. The store refuses more than the purchase credited.
    public var amount: Int64

    public init(
        eventId: String, userId: String, originalEventId: String, bizId: String, reason: String = "", amount: Int64 = 0
    ) {
        self.eventId = eventId
        self.userId = userId
        self.originalEventId = originalEventId
        self.bizId = bizId
        self.reason = reason
        self.amount = amount
    }

    func validated() throws(PointsError) -> ValidatedClawback {
        let eventId = try PointsValidation.eventId(eventId)
        let userId = try PointsValidation.userId(userId)
        let originalEventId = try PointsValidation.eventId(originalEventId, field: "original_event_id")
        let bizId = try PointsValidation.text(
            bizId, field: "biz_id", maxBytes: PointsLimits.bizIdBytesMax, required: true)
        let reason = try PointsValidation.text(
            reason, field: "reason", maxBytes: PointsLimits.reasonBytesMax, required: false)
        guard originalEventId != eventId else {
            throw PointsError.validationFailed(field: "original_event_id", problem: "must differ from event_id")
        }
        // The purchase's credits bound it further once the purchase is found (ClawbackPlan.amountToTakeBack).
        guard amount >= 0, amount <= PointsLimits.balanceMax else {
            throw PointsError.validationFailed(
                field: "amount", problem: "must be 0 (all of the purchase) or 1...the purchase's credits")
        }
        return ValidatedClawback(
            eventId: eventId, userId: userId, originalEventId: originalEventId, bizId: bizId,
            reason: reason, amount: amount)
    }
}

/// A clawback whose every field passed validation.
struct ValidatedClawback: Sendable {
    let eventId: String
    let userId: UUID
    let originalEventId: String
    let bizId: String
    let reason: String
    /// 0 means all of the purchase's credits.
    let amount: Int64

    /// The request's identity for replay/conflict decisions, given the
    /// purchase's credits when the purchase exists. An amount equal to them
    /// IS "all" (0): both spellings are one request. The amount joins the
    /// fields only when it is not "all", so a clawback stored before the
    /// field existed still replays, whichever way a retry spells it.
    func fingerprint(purchaseCredits: Int64?) -> String {
        var fields = [UUIDText.lowercased(userId), originalEventId, bizId, reason]
        if amount != 0 && amount != purchaseCredits { fields.append("amount=\(amount)") }
        return RequestFingerprint.make(kind: "clawback.v1", fields: fields)
    }
}
