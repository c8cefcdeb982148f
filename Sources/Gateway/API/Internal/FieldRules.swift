/// The field rules of the public request bodies, one function per rule, each
/// throwing a `ValidationError` naming the field. Never echoes the value.
enum FieldRules {
    /// productCode: [a-z0-9_]{1,64}.
    static func productCode(_ text: String, field: String = "productCode") throws(ValidationError) -> String {
        let bytes = text.utf8
        guard bytes.count <= GatewayLimits.productCodeBytesMax else {
            throw ValidationError(field: field, reason: .tooLong(maximumBytes: GatewayLimits.productCodeBytesMax))
        }
        guard !bytes.isEmpty, bytes.allSatisfy({ isLowerAlphanumeric($0) || $0 == UInt8(ascii: "_") }) else {
            throw ValidationError(field: field, reason: .invalidFormat(rule: "[a-z0-9_]{1,64}"))
        }
        return text
    }

    /// appStoreProductId: 1...255 of [A-Za-z0-9._-] (App Store Connect's alphabet).
    static func appStoreProductId(_ text: String, field: String = "appStoreProductId") throws(ValidationError) -> String {
        let bytes = text.utf8
        guard bytes.count <= GatewayLimits.appStoreProductIdBytesMax else {
            throw ValidationError(field: field, reason: .tooLong(maximumBytes: GatewayLimits.appStoreProductIdBytesMax))
        }
        let allowed: (UInt8) -> Bool = {
            isLowerAlphanumeric($0) || ($0 >= 0x41 && $0 <= 0x5A) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_")
                || $0 == UInt8(ascii: "-")
        }
        guard !bytes.isEmpty, bytes.allSatisfy(allowed) else {
            throw ValidationError(field: field, reason: .invalidFormat(rule: "[A-Za-z0-9._-]{1,255}"))
        }
        return text
    }

    /// transactionId: 1...32 decimal digits.
    static func transactionId(_ text: String, field: String = "transactionId") throws(ValidationError) -> String {
        let bytes = text.utf8
        guard bytes.count <= GatewayLimits.transactionIdDigitsMax else {
            throw ValidationError(field: field, reason: .tooLong(maximumBytes: GatewayLimits.transactionIdDigitsMax))
        }
        guard !bytes.isEmpty, bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw ValidationError(field: field, reason: .invalidFormat(rule: "[0-9]{1,32}"))
        }
        return text
    }

    /// A compact JWS: three base64url segments joined by dots, at most 64 KiB.
    /// Only the shape is checked here; PaymentsService verifies it.
    static func compactJWS(_ text: String, field: String) throws(ValidationError) -> String {
        let bytes = text.utf8
        guard bytes.count <= GatewayLimits.signedTransactionInfoBytesMax else {
            throw ValidationError(field: field, reason: .tooLong(maximumBytes: GatewayLimits.signedTransactionInfoBytesMax))
        }
        let segments = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3, segments.allSatisfy({ !$0.isEmpty && $0.allSatisfy(Base64URL.isAlphabetByte) }) else {
            throw ValidationError(field: field, reason: .invalidFormat(rule: "compact JWS (base64url.base64url.base64url)"))
        }
        return text
    }

    /// A canonical UUID, returned lower-cased.
    static func uuid(_ text: String, field: String) throws(ValidationError) -> String {
        guard let normalized = UUIDText.normalized(text) else {
            throw ValidationError(field: field, reason: .invalidFormat(rule: "UUID (8-4-4-4-12 hex)"))
        }
        return normalized
    }

    private static func isLowerAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
    }
}
