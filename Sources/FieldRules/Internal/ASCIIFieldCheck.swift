/// The common shape of the ASCII rules: not empty, at most `bytesMax`
/// bytes, every byte in one class. Checked in that order, so a value that
/// is both too long and malformed reports `tooLong`.
enum ASCIIFieldCheck {
    static func check(
        _ text: String, field: String, rule: String, bytesMax: Int, allowed: (UInt8) -> Bool
    ) throws(FieldRuleError) {
        let bytes = text.utf8
        guard !bytes.isEmpty else {
            throw FieldRuleError(field: field, code: .missing, rule: rule, bytesMax: bytesMax)
        }
        guard bytes.count <= bytesMax else {
            throw FieldRuleError(field: field, code: .tooLong, rule: rule, bytesMax: bytesMax)
        }
        guard bytes.allSatisfy(allowed) else {
            throw FieldRuleError(field: field, code: .invalidFormat, rule: rule, bytesMax: bytesMax)
        }
    }
}
