import Foundation
import StrictJSON
import UUIDText

/// A request to spend credits (points.proto SpendRequest), as the caller
/// sent it. `validated()` turns it into a `ValidatedSpend`.
public struct SpendCommand: Sendable, Equatable {
    public var eventId: String
    public var userId: String
    public var amount: Int64
    public var bizType: String
    public var bizId: String
    public var metadataJSON: String

    public init(
        eventId: String, userId: String, amount: Int64, bizType: String, bizId: String = "", metadataJSON: String = ""
    ) {
        self.eventId = eventId
        self.userId = userId
        self.amount = amount
        self.bizType = bizType
        self.bizId = bizId
        self.metadataJSON = metadataJSON
    }

    /// Biz types the ledger keeps for itself: purchases and refunds
    /// ("payment") and operators' adjustments ("support").
    static let reservedBizTypes: Set<String> = ["payment", "support"]

    func validated() throws(PointsError) -> ValidatedSpend {
        let eventId = try PointsValidation.callerEventId(eventId)
        let userId = try PointsValidation.userId(userId)
        guard (1...PointsLimits.spendAmountMax).contains(amount) else {
            throw PointsError.validationFailed(field: "amount", problem: "must be 1...\(PointsLimits.spendAmountMax)")
        }
        let bizType = try Self.bizType(bizType)
        let bizId = try PointsValidation.text(
            bizId, field: "biz_id", maxBytes: PointsLimits.bizIdBytesMax, required: false)
        let metadata = try Self.metadata(metadataJSON)
        let fingerprint = RequestFingerprint.make(
            kind: "spend.v1",
            fields: [
                UUIDText.lowercased(userId), String(amount), bizType, bizId, metadata.map(JSONWriter.string) ?? "",
            ])
        return ValidatedSpend(
            eventId: eventId, userId: userId, amount: amount, bizType: bizType, bizId: bizId, metadata: metadata,
            fingerprint: fingerprint)
    }

    /// [a-z][a-z0-9_]{0,31}, and not one the ledger keeps for itself.
    static func bizType(_ text: String) throws(PointsError) -> String {
        let bytes = Array(text.utf8)
        guard let first = bytes.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first),
            bytes.count <= PointsLimits.bizTypeBytesMax,
            bytes.allSatisfy({
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || $0 == UInt8(ascii: "_")
            })
        else {
            throw PointsError.validationFailed(field: "biz_type", problem: "must match [a-z][a-z0-9_]{0,31}")
        }
        guard !reservedBizTypes.contains(text) else {
            throw PointsError.validationFailed(
                field: "biz_type", problem: "\(text) is kept for the ledger's own entries")
        }
        return text
    }

    /// Empty, or one JSON object of at most `spendMetadataBytesMax` bytes
    /// (strict: no duplicate keys) that jsonb keeps as written (`JSONBStorability`).
    static func metadata(_ text: String) throws(PointsError) -> JSONValue? {
        guard !text.isEmpty else { return nil }
        guard text.utf8.count <= PointsLimits.spendMetadataBytesMax else {
            throw PointsError.validationFailed(
                field: "metadata_json", problem: "larger than \(PointsLimits.spendMetadataBytesMax) bytes")
        }
        let parsed: JSONValue
        do {
            parsed = try StrictJSONParser(documentBytesMax: PointsLimits.spendMetadataBytesMax, depthMax: 8).parse(text)
        } catch {
            throw PointsError.validationFailed(field: "metadata_json", problem: "is not strict JSON")
        }
        guard case .object = parsed else {
            throw PointsError.validationFailed(field: "metadata_json", problem: "must be a JSON object")
        }
        if let problem = JSONBStorability.problem(
            in: parsed, numberDigitsMax: PointsLimits.spendMetadataNumberDigitsMax)
        {
            throw PointsError.validationFailed(field: "metadata_json", problem: problem)
        }
        return parsed
    }
}

/// A spend whose every field passed validation.
struct ValidatedSpend: Sendable {
    let eventId: String
    let userId: UUID
    let amount: Int64
    let bizType: String
    let bizId: String
    let metadata: JSONValue?
    let fingerprint: String
}
