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
public enum EmailNormalization {
    public static func normalized(_ email: String) -> String {
        email.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping.lowercased()
    }
}
