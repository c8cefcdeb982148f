import Foundation

/// Masks an email for support snapshots: "alice@example.com" ->
/// "a***@example.com". The local part keeps only its first character; text
/// without an "@" becomes "***".
public enum EmailMasker {
    public static func mask(_ email: String) -> String {
        let normalized = EmailHasher.normalize(email)
        guard let at = normalized.lastIndex(of: "@") else { return "***" }
        let local = normalized[..<at]
        let domain = normalized[normalized.index(after: at)...]
        let head = local.first.map(String.init) ?? ""
        return head + "***@" + domain
    }

    /// True for text `mask` could have produced (used to refuse unmasked snapshots).
    public static func looksMasked(_ text: String) -> Bool {
        if text == "***" { return true }
        guard let marker = text.range(of: "***@") else { return false }
        return text.distance(from: text.startIndex, to: marker.lowerBound) <= 1
    }
}
