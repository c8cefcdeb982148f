import CryptoPrimitives

/// A hex SHA-256 over a request's identifying fields, stored with the ledger
/// row so that a second request with the same event id is recognised as a
/// replay (same fingerprint) or a conflict (different one).
enum RequestFingerprint {
    /// Fields joined with a unit separator (0x1F), which validation keeps out
    /// of every field, after a kind tag, so no two field lists collide.
    static func make(kind: String, fields: [String]) -> String {
        let canonical = Array(([kind] + fields).joined(separator: "\u{1F}").utf8)
        return HexEncoding.lowercase(SHA256.hash(canonical))
    }
}
