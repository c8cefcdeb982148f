import Foundation

/// The one normalisation of an email address as a starter-pack identity
/// (docs/protocols/payments/apple-iap-protocol.md, 5.2), applied by the
/// gateway before hashing and masking.
///
/// 1. Trim surrounding whitespace and newlines (Unicode's, not only ASCII).
/// 2. Unicode NFC (canonical composition): "é" typed as U+00E9 and as
///    "e" + U+0301 are one identity, and so are their hashes. NFKC is not
///    used: compatibility folding ("ﬁ" to "fi", full-width to ASCII) would
///    merge addresses a mail server keeps apart.
/// 3. Lower-case with Unicode's default case mapping, which is locale
///    independent ("İ" becomes "i̇" everywhere, not "i" in a Turkish locale).
///
/// The result is idempotent and stays in NFC (tested over every scalar and
/// over generated addresses). No other rewriting: dots, "+tags" and IDNA are
/// the mail provider's business, and rewriting them would merge people.
///
/// An all-ASCII address (nearly every one) takes a byte path that gives the
/// same result without Foundation's Unicode machinery: in ASCII, Unicode's
/// whitespace and newlines are exactly U+0009...U+000D and U+0020, NFC
/// changes nothing, and the default lower-casing is A-Z to a-z (tested
/// against the Unicode path).
public enum EmailNormalization {
    public static func normalized(_ email: String) -> String {
        asciiNormalized(email) ?? unicodeNormalized(email)
    }

    /// The general path: Foundation's trimming, NFC and lower-casing.
    static func unicodeNormalized(_ email: String) -> String {
        email.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping.lowercased()
    }

    /// The same normalisation for an all-ASCII address; nil for any other.
    static func asciiNormalized(_ email: String) -> String? {
        let bytes = email.utf8
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        let isWhitespace: (UInt8) -> Bool = { $0 == 0x20 || (0x09...0x0D).contains($0) }
        guard let first = bytes.firstIndex(where: { !isWhitespace($0) }) else { return "" }
        let last = bytes.lastIndex(where: { !isWhitespace($0) })!
        return String(decoding: bytes[first...last].map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
