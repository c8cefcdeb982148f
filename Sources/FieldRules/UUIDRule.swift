import Foundation
import UUIDText

/// A UUID as text: user ids (`user_id`, the JWT's `sub`) and app account
/// tokens.
///
/// Accepted is exactly one spelling: 36 bytes, 8-4-4-4-12 hex digits of
/// either case separated by hyphens (`7C4C7A82-2f6f-4e70-b57a-8b0a7f2e9b72`).
/// Refused are braces, a `urn:uuid:` prefix, the 32 digits without hyphens
/// and surrounding whitespace. The version and variant bits are not checked.
/// The canonical form is the lower-case text, which is what the services
/// store, compare and send.
public enum UUIDRule {
    public static let rule = "UUID (8-4-4-4-12 hex)"

    /// The canonical lower-case text of `text`.
    public static func canonical(_ text: String, field: String = "user_id") throws(FieldRuleError) -> String {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else {
            throw FieldRuleError(field: field, code: .missing, rule: rule, bytesMax: FieldLimits.uuidTextBytes)
        }
        guard bytes.count == FieldLimits.uuidTextBytes, bytes.indices.allSatisfy({ isValid(bytes[$0], at: $0) }) else {
            throw FieldRuleError(field: field, code: .invalidFormat, rule: rule, bytesMax: FieldLimits.uuidTextBytes)
        }
        let lowered = bytes.map { ASCIIByte.isUpperLetter($0) ? $0 + 0x20 : $0 }
        return String(decoding: lowered, as: UTF8.self)
    }

    /// The same rule, as Foundation's `UUID` (read by `UUIDText`, which
    /// accepts exactly the spelling `canonical` does, so the text is read
    /// once and no copy is made). `field` is built only for an error.
    public static func uuid(_ text: String, field: @autoclosure () -> String = "user_id") throws(FieldRuleError) -> UUID
    {
        if let uuid = UUIDText.parse(text) { return uuid }
        _ = try canonical(text, field: field())
        preconditionFailure("UUIDText refused a UUID canonical accepts")
    }

    private static func isValid(_ byte: UInt8, at index: Int) -> Bool {
        switch index {
        case 8, 13, 18, 23: return byte == UInt8(ascii: "-")
        default: return ASCIIByte.isHexDigit(byte)
        }
    }
}
