import Contracts
import FieldRules
import Foundation

/// Pure input checks shared by every request. Each returns the normalised
/// value or throws `validationFailed` naming the field (never echoing it).
enum PointsValidation {
    /// A user id: canonical UUID text (any case), `FieldRules.UUIDRule`.
    static func userId(_ text: String, field: @autoclosure () -> String = "user_id") throws(PointsError) -> UUID {
        do { return try UUIDRule.uuid(text, field: field()) } catch { throw refusal(error) }
    }

    /// An idempotency key: 1...200 bytes of [A-Za-z0-9._:-], e.g. "payment.apple_iap:2000000847061981".
    static func eventId(_ text: String, field: String = "event_id") throws(PointsError) -> String {
        let bytes = text.utf8
        guard !bytes.isEmpty else { throw PointsError.validationFailed(field: field, problem: "is required") }
        guard bytes.count <= PointsLimits.eventIdBytesMax else {
            throw PointsError.validationFailed(
                field: field, problem: "longer than \(PointsLimits.eventIdBytesMax) bytes")
        }
        for byte in bytes where !isEventIdByte(byte) {
            throw PointsError.validationFailed(field: field, problem: "may only contain letters, digits and . _ : -")
        }
        return text
    }

    /// A spend caller's event id (Spend, ReverseSpend): `eventId`'s rules,
    /// outside the ledger's own namespaces (`LedgerEventNamespace`).
    static func callerEventId(_ text: String, field: String = "event_id") throws(PointsError) -> String {
        let eventId = try eventId(text, field: field)
        guard !LedgerEventNamespace.isReserved(eventId) else {
            throw PointsError.validationFailed(
                field: field,
                problem: "may not start with one of the ledger's own \(quoted(LedgerEventNamespace.reserved))")
        }
        return eventId
    }

    /// An operator adjustment's explicit event id (`PointsService adjust
    /// --event-id`): `eventId`'s rules, outside the namespaces of
    /// PaymentsService's movements (purchases, refunds, their reversals and
    /// settlements). An adjustment under `payment.apple_iap:<id>` would take
    /// that purchase's id: its grant would be EVENT_CONFLICT on every retry
    /// and a refund's clawback would find no purchase, so the user kept
    /// refunded credits. The adjustments' own `adjust:` namespace stays
    /// open: the ids `adjust` derives live there.
    static func adjustmentEventId(_ text: String, field: String = "event_id") throws(PointsError) -> String {
        let eventId = try eventId(text, field: field)
        guard !paymentNamespaces.contains(where: { eventId.hasPrefix($0) }) else {
            throw PointsError.validationFailed(
                field: field, problem: "may not start with one of the payment movements' \(quoted(paymentNamespaces))")
        }
        return eventId
    }

    /// The ledger's own namespaces but the adjustments'.
    static let paymentNamespaces = LedgerEventNamespace.reserved.filter { $0 != LedgerEventNamespace.adjustment }

    /// `["a.", "b."]` as `"a.", "b."`, for messages and help.
    static func quoted(_ namespaces: [String]) -> String {
        namespaces.map { "\"\($0)\"" }.joined(separator: ", ")
    }

    /// A product code: 1...64 bytes of [a-z0-9_], `FieldRules.ProductCodeRule`.
    static func productCode(_ text: String, field: String = "product_code") throws(PointsError) -> String {
        do { return try ProductCodeRule.validated(text, field: field) } catch { throw refusal(error) }
    }

    /// An email hash: 64 lower-case hex digits (HMAC-SHA256), `FieldRules.EmailHashRule`.
    static func emailHash(_ text: String, field: String = "email_hash") throws(PointsError) -> String {
        do { return try EmailHashRule.validated(text, field: field) } catch { throw refusal(error) }
    }

    /// A masked email, or empty when the caller has none: the one mask check
    /// (`FieldRules.EmailMask`), which every mask the gateway makes passes.
    static func emailMasked(_ text: String, field: String = "email_masked") throws(PointsError) -> String {
        if text.isEmpty { return text }
        do { return try EmailMask.validated(text, field: field) } catch { throw refusal(error) }
    }

    /// A shared rule's refusal as this service's VALIDATION_FAILED.
    private static func refusal(_ error: FieldRuleError) -> PointsError {
        PointsError.validationFailed(field: error.field, problem: error.problem)
    }

    /// Free text: at most `maxBytes` UTF-8 bytes, no control characters;
    /// empty allowed only when not `required`.
    static func text(_ text: String, field: String, maxBytes: Int, required: Bool) throws(PointsError) -> String {
        if text.isEmpty {
            if required { throw PointsError.validationFailed(field: field, problem: "is required") }
            return text
        }
        guard text.utf8.count <= maxBytes else {
            throw PointsError.validationFailed(field: field, problem: "longer than \(maxBytes) bytes")
        }
        for scalar in text.unicodeScalars where isForbidden(scalar) {
            throw PointsError.validationFailed(field: field, problem: "contains control characters")
        }
        return text
    }

    /// Free text arriving as bytes (e.g. a protobuf string field): must be
    /// valid UTF-8, then the same rules as `text(_:...)`.
    static func text(bytes: [UInt8], field: String, maxBytes: Int, required: Bool) throws(PointsError) -> String {
        guard bytes.count <= maxBytes else {
            throw PointsError.validationFailed(field: field, problem: "longer than \(maxBytes) bytes")
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw PointsError.validationFailed(field: field, problem: "is not valid UTF-8")
        }
        return try text(decoded, field: field, maxBytes: maxBytes, required: required)
    }

    /// GetBalances' user ids: 1...64 of them, each a user id as above (an id
    /// may repeat); the field names the failing entry (`user_ids[3]`).
    static func userIds(_ texts: [String]) throws(PointsError) -> [UUID] {
        guard !texts.isEmpty, texts.count <= PointsLimits.balancesPerCallMax else {
            throw PointsError.validationFailed(
                field: "user_ids", problem: "must hold 1...\(PointsLimits.balancesPerCallMax) user ids")
        }
        var ids: [UUID] = []
        ids.reserveCapacity(texts.count)
        for (index, text) in texts.enumerated() {
            ids.append(try userId(text, field: "user_ids[\(index)]"))
        }
        return ids
    }

    /// A ledger page size: 1...200, 0 meaning the default of 50.
    static func pageSize(_ value: Int32) throws(PointsError) -> Int {
        if value == 0 { return PointsLimits.ledgerPageSizeDefault }
        guard value > 0, value <= Int32(PointsLimits.ledgerPageSizeMax) else {
            throw PointsError.validationFailed(
                field: "page_size", problem: "must be 0...\(PointsLimits.ledgerPageSizeMax)")
        }
        return Int(value)
    }

    private static func isEventIdByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2E, 0x5F, 0x3A, 0x2D: return true
        default: return false
        }
    }

    /// C0/C1 controls, DEL, and the bidi/line separators that break logs and displays.
    private static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (value >= 0x7F && value <= 0x9F) || value == 0x2028 || value == 0x2029
            || (value >= 0x202A && value <= 0x202E) || (value >= 0x2066 && value <= 0x2069)
    }
}
