import COpenSSL

/// A hex SHA-256 over a request's identifying fields, stored with the ledger
/// row so that a second request with the same event id is recognised as a
/// replay (same fingerprint) or a conflict (different one).
enum RequestFingerprint {
    /// Fields joined with a unit separator (0x1F), which validation keeps out
    /// of every field, after a kind tag, so no two field lists collide.
    static func make(kind: String, fields: [String]) -> String {
        let canonical = Array(([kind] + fields).joined(separator: "\u{1F}").utf8)
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        canonical.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { output in
                _ = SHA256(input.baseAddress, input.count, output.baseAddress)
            }
        }
        return HexEncoding.lowercase(digest)
    }
}
