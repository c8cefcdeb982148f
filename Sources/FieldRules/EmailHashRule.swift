/// The starter-pack identity as the services see it (`email_hash`):
/// HMAC-SHA256 of the normalised address (`EmailNormalization`) as 64
/// lower-case hex digits. Upper-case hex is refused so one identity has one
/// spelling in PointsService's unique index.
public enum EmailHashRule {
    public static let rule = "[0-9a-f]{64}"

    /// `text` itself when valid.
    public static func validated(_ text: String, field: String = "email_hash") throws(FieldRuleError) -> String {
        let bytes = text.utf8
        guard !bytes.isEmpty else {
            throw FieldRuleError(field: field, code: .missing, rule: rule, bytesMax: FieldLimits.emailHashHexDigits)
        }
        guard bytes.count == FieldLimits.emailHashHexDigits, bytes.allSatisfy(ASCIIByte.isLowerHexDigit) else {
            throw FieldRuleError(
                field: field, code: .invalidFormat, rule: rule, bytesMax: FieldLimits.emailHashHexDigits)
        }
        return text
    }
}
