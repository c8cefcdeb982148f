import CryptoPrimitives
import FieldRules

/// The field rules of the public request bodies, each throwing a
/// `ValidationError` naming the JSON member. The shared rules come from the
/// `FieldRules` module (the services check the same ones); only the JWS
/// shape is the gateway's own. Never echoes the value.
enum RequestFieldRules {
    /// productCode: [a-z0-9_]{1,64}.
    static func productCode(_ text: String, field: String = "productCode") throws(ValidationError) -> String {
        do { return try ProductCodeRule.validated(text, field: field) } catch { throw ValidationError(error) }
    }

    /// appStoreProductId: the public API's [A-Za-z0-9._-]{1,255}, which the
    /// services' printable-ASCII rule always accepts.
    static func appStoreProductId(_ text: String, field: String = "appStoreProductId") throws(ValidationError) -> String
    {
        do { return try AppStoreProductIDRule.validatedPublic(text, field: field) } catch {
            throw ValidationError(error)
        }
    }

    /// transactionId: 1...32 decimal digits.
    static func transactionId(_ text: String, field: String = "transactionId") throws(ValidationError) -> String {
        do { return try TransactionIDRule.validated(text, field: field) } catch { throw ValidationError(error) }
    }

    /// A StoreKit 1 app receipt: present and at most `receiptDataBytesMax`.
    /// Its base64 and its content are read by PaymentsService, the one
    /// reader, so every unreadable receipt gets the same problem
    /// (PAYMENT_RECEIPT_INVALID with a stable reason).
    static func base64Receipt(_ text: String, field: String) throws(ValidationError) -> String {
        guard !text.isEmpty else {
            throw ValidationError(field: field, reason: .invalidFormat(rule: "a base64 app receipt"))
        }
        guard text.utf8.count <= GatewayLimits.receiptDataBytesMax else {
            throw ValidationError(field: field, reason: .tooLong(maximumBytes: GatewayLimits.receiptDataBytesMax))
        }
        return text
    }

    /// A compact JWS: three base64url segments joined by dots, at most 64 KiB.
    /// Only the shape is checked here; PaymentsService verifies it.
    static func compactJWS(_ text: String, field: String) throws(ValidationError) -> String {
        let bytes = text.utf8
        guard bytes.count <= GatewayLimits.signedTransactionInfoBytesMax else {
            throw ValidationError(
                field: field, reason: .tooLong(maximumBytes: GatewayLimits.signedTransactionInfoBytesMax))
        }
        // One pass: three non-empty runs of base64url bytes between two dots.
        var dots = 0
        var segmentLength = 0
        var wellFormed = true
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                dots += 1
                if segmentLength == 0 || dots > 2 { wellFormed = false; break }
                segmentLength = 0
            } else if StrictBase64.isURLAlphabetByte(byte) {
                segmentLength += 1
            } else {
                wellFormed = false
                break
            }
        }
        guard wellFormed, dots == 2, segmentLength > 0 else {
            throw ValidationError(
                field: field, reason: .invalidFormat(rule: "compact JWS (base64url.base64url.base64url)"))
        }
        return text
    }

    /// A canonical UUID, returned lower-cased.
    static func uuid(_ text: String, field: String) throws(ValidationError) -> String {
        do { return try UUIDRule.canonical(text, field: field) } catch { throw ValidationError(error) }
    }
}
