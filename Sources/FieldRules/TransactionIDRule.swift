/// An Apple transaction id (`transactionId`, `originalTransactionId`): 1 to
/// 32 ASCII digits. Apple's are 15-16 digits today; the headroom is cheap.
/// Leading zeros and other Unicode digits are not special: "0" is a digit,
/// "٣" is not.
public enum TransactionIDRule {
    public static let rule = "[0-9]{1,32}"

    /// `text` itself when valid.
    public static func validated(_ text: String, field: String = "transaction_id") throws(FieldRuleError) -> String {
        try ASCIIFieldCheck.check(
            text, field: field, rule: rule, bytesMax: FieldLimits.transactionIdDigitsMax, allowed: ASCIIByte.isDigit)
        return text
    }
}
