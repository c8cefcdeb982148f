import Foundation

/// The masked email kept for support (`a***@example.com`), and the one check
/// every service applies to it.
///
/// A mask is `***`, or an optional hint (the first safe character of the
/// local part), `***@`, and the safe characters of the domain; at most 320
/// UTF-8 bytes. "Safe" is `DisplaySafeScalar`: no control, format (bidi,
/// zero-width), separator, private-use or unassigned scalars, NUL included.
///
/// `masked(_:)` never fails: an address with no usable shape becomes `***`,
/// unsafe characters are dropped, a long domain is cut. Its output always
/// passes `isValid(_:)`, so a paid purchase can never be refused downstream
/// for the content of the buyer's address.
public enum EmailMask {
    /// The mask of an address without a usable shape.
    public static let placeholder = "***"
    public static let rule = "a masked email (an optional character, three asterisks, @, a printable domain)"

    /// The mask of `email`, after `EmailNormalization`. Reveals at most one
    /// character of the local part.
    public static func masked(_ email: String) -> String {
        let scalars = EmailNormalization.normalized(email).unicodeScalars
        guard let at = scalars.lastIndex(of: "@"), at != scalars.startIndex else { return placeholder }
        // Dropping a scalar can leave a base and a mark side by side that NFC
        // would compose: compose again so the mask is NFC like the address.
        var safeDomain = String.UnicodeScalarView()
        safeDomain.append(contentsOf: scalars[scalars.index(after: at)...].filter(isDomainScalar))
        let domain =
            safeDomain.allSatisfy(\.isASCII)
            ? safeDomain : String(safeDomain).precomposedStringWithCanonicalMapping.unicodeScalars
        guard !domain.isEmpty else { return placeholder }
        var mask = String.UnicodeScalarView()
        if let hint = scalars[..<at].first(where: isHintScalar) { mask.append(hint) }
        mask.append(contentsOf: "***@".unicodeScalars)
        var bytes = mask.reduce(0) { $0 + $1.utf8.count }
        for scalar in domain {
            bytes += scalar.utf8.count
            guard bytes <= FieldLimits.emailMaskBytesMax else { break }
            mask.append(scalar)
        }
        return String(mask)
    }

    /// True when `text` has the shape `masked(_:)` produces.
    public static func isValid(_ text: String) -> Bool {
        let bytes = text.utf8
        guard !bytes.isEmpty, bytes.count <= FieldLimits.emailMaskBytesMax else { return false }
        if bytes.elementsEqual(placeholder.utf8) { return true }
        var rest = Substring(text).unicodeScalars
        if let first = rest.first, isHintScalar(first) { rest.removeFirst() }
        guard rest.starts(with: "***@".unicodeScalars) else { return false }
        let domain = rest.dropFirst(4)
        return !domain.isEmpty && domain.allSatisfy(isDomainScalar)
    }

    /// `text` itself when it is a valid mask.
    public static func validated(_ text: String, field: String = "email_masked") throws(FieldRuleError) -> String {
        let bytes = text.utf8
        guard !bytes.isEmpty else {
            throw FieldRuleError(field: field, code: .missing, rule: rule, bytesMax: FieldLimits.emailMaskBytesMax)
        }
        guard bytes.count <= FieldLimits.emailMaskBytesMax else {
            throw FieldRuleError(field: field, code: .tooLong, rule: rule, bytesMax: FieldLimits.emailMaskBytesMax)
        }
        guard isValid(text) else {
            throw FieldRuleError(
                field: field, code: .invalidFormat, rule: rule, bytesMax: FieldLimits.emailMaskBytesMax)
        }
        return text
    }

    /// A stored mask made valid: `text` itself when it passes `isValid(_:)`
    /// or is empty (no mask known), else the mask of `text`. For masks stored
    /// before this check existed: a saga resumed after an upgrade must not
    /// fail for good on one.
    public static func repaired(_ text: String) -> String {
        text.isEmpty || isValid(text) ? text : masked(text)
    }

    /// A character the hint may be: safe, not a lone combining mark, and
    /// not one of the mask's own `*` and `@`.
    private static func isHintScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar != "*" && scalar != "@" && DisplaySafeScalar.isSafe(scalar) && !DisplaySafeScalar.isMark(scalar)
    }

    private static func isDomainScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar != "@" && DisplaySafeScalar.isSafe(scalar)
    }
}
