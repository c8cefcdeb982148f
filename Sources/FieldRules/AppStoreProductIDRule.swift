/// An App Store product id (`com.meeyao.qianwen.starter_pack`).
///
/// Between services the rule is 1 to 255 printable ASCII characters without
/// spaces: the value is compared with the product id inside Apple's signed
/// transaction, so it only has to be safe to store and log.
///
/// The public API (the gateway's request bodies and `docs/openapi.yaml`)
/// promises the narrower App Store Connect alphabet `[A-Za-z0-9._-]`. Every
/// value that passes the public rule passes the service rule (tested), so
/// what the gateway accepts the services never refuse.
public enum AppStoreProductIDRule {
    public static let rule = "printable ASCII without spaces, 1-255 bytes"
    public static let publicRule = "[A-Za-z0-9._-]{1,255}"

    /// `text` itself when valid: the rule between services.
    public static func validated(_ text: String, field: String = "app_store_product_id") throws(FieldRuleError)
        -> String
    {
        try ASCIIFieldCheck.check(
            text, field: field, rule: rule, bytesMax: FieldLimits.appStoreProductIdBytesMax,
            allowed: ASCIIByte.isVisible)
        return text
    }

    /// `text` itself when valid: the public API's rule.
    public static func validatedPublic(_ text: String, field: String = "appStoreProductId") throws(FieldRuleError)
        -> String
    {
        try ASCIIFieldCheck.check(text, field: field, rule: publicRule, bytesMax: FieldLimits.appStoreProductIdBytesMax)
        {
            ASCIIByte.isLowerLetter($0) || ASCIIByte.isUpperLetter($0) || ASCIIByte.isDigit($0)
                || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
        }
        return text
    }
}
