import Foundation

/// Loggable stand-ins for secrets. A JWS, an email, a bearer token or a key
/// never reaches a log line; these forms let support correlate without them.
public enum Redacted {
    /// A JWS as its length and a short, non-reversible fingerprint of its
    /// signature part, e.g. `jws(len=2357,sig=…a1b2c3d4)`.
    public static func jws(_ compact: String) -> String {
        let signature = compact.split(separator: ".", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        return "jws(len=\(compact.utf8.count),sig=…\(String(signature.suffix(8))))"
    }

    /// An email as its first character and domain: `a***@example.com`.
    public static func email(_ address: String) -> String {
        guard let at = address.lastIndex(of: "@"), at > address.startIndex else { return "***" }
        return "\(address[address.startIndex])***\(address[at...])"
    }

    /// A bearer token: only that one was present.
    public static func token(_ token: String) -> String { "token(len=\(token.utf8.count))" }
}
