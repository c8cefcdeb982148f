import Contracts
import Foundation
import UUIDText

/// An operator's correction of one user's balance (`PointsService adjust`):
/// a signed amount, why, and who. It becomes one audited `adjust` ledger row.
public struct AdjustCommand: Sendable, Equatable {
    public var userId: String
    /// Credits to add (> 0) or take away (< 0); never 0.
    public var amount: Int64
    public var reason: String
    public var operatorName: String
    /// The idempotency key; empty means derived from the other fields
    /// (`derivedEventId`), so running the same command twice applies it once.
    public var eventId: String

    public init(userId: String, amount: Int64, reason: String, operatorName: String, eventId: String = "") {
        self.userId = userId
        self.amount = amount
        self.reason = reason
        self.operatorName = operatorName
        self.eventId = eventId
    }

    /// The prefix of a derived event id ("adjust:" + 32 hex digits of the fingerprint).
    static let derivedEventIdPrefix = LedgerEventNamespace.adjustment
    /// 128 bits of SHA-256: enough that two different adjustments never share an id.
    static let derivedEventIdHexDigits = 32

    /// Checks every field before any I/O; errors name the field (user_id,
    /// amount, reason, operator, event_id).
    func validated() throws(PointsError) -> ValidatedAdjustment {
        let userId = try PointsValidation.userId(userId)
        guard amount != 0, amount >= -PointsLimits.balanceMax, amount <= PointsLimits.balanceMax else {
            throw PointsError.validationFailed(
                field: "amount",
                problem: "must be a non-zero integer in -\(PointsLimits.balanceMax)...\(PointsLimits.balanceMax)")
        }
        let reason = try PointsValidation.text(
            reason, field: "reason", maxBytes: PointsLimits.adjustReasonBytesMax, required: true)
        let operatorName = try PointsValidation.text(
            operatorName, field: "operator", maxBytes: PointsLimits.operatorNameBytesMax, required: true)
        let fingerprint = RequestFingerprint.make(
            kind: "adjust.v1", fields: [UUIDText.lowercased(userId), String(amount), reason, operatorName])
        let eventId =
            eventId.isEmpty
            ? Self.derivedEventIdPrefix + fingerprint.prefix(Self.derivedEventIdHexDigits)
            : try PointsValidation.adjustmentEventId(eventId)
        return ValidatedAdjustment(
            eventId: eventId, userId: userId, amount: amount, reason: reason, operatorName: operatorName,
            fingerprint: fingerprint)
    }
}

/// An adjustment whose every field passed validation.
struct ValidatedAdjustment: Sendable, Equatable {
    let eventId: String
    let userId: UUID
    /// Signed, non-zero: the ledger row's direction is its sign, its amount the magnitude.
    let amount: Int64
    let reason: String
    let operatorName: String
    let fingerprint: String
}
