/// A product code of PointsService's catalog (`starter_pack`): 1 to 64 of
/// `[a-z0-9_]`. Lower case only, so one product has one spelling.
public enum ProductCodeRule {
    public static let rule = "[a-z0-9_]{1,64}"

    /// `text` itself when valid.
    public static func validated(_ text: String, field: String = "product_code") throws(FieldRuleError) -> String {
        try ASCIIFieldCheck.check(text, field: field, rule: rule, bytesMax: FieldLimits.productCodeBytesMax) {
            ASCIIByte.isLowerLetter($0) || ASCIIByte.isDigit($0) || $0 == UInt8(ascii: "_")
        }
        return text
    }
}
