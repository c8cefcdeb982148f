import Foundation

/// The email as an identity for the starter-pack rule (PRD 4.2): one
/// normalisation, a keyed hash that services store instead of the address,
/// and a masked snapshot for support. The address itself never leaves the
/// gateway and is never logged.
public struct EmailIdentity: Sendable {
    private let key: HMACSHA256Key

    /// - Parameter hashKey: the HMAC key (at least 32 bytes), shared by no one
    ///   else: without it the hashes cannot be brute-forced from address lists.
    public init(hashKey: [UInt8]) throws(JWTConfigurationError) {
        guard hashKey.count >= HMACSHA256Key.secretBytesMin else { throw JWTConfigurationError.secretTooShort }
        key = HMACSHA256Key(secret: hashKey)
    }

    /// Trimmed of surrounding whitespace and newlines and lower-cased
    /// (Unicode, locale independent). Re-registering with
    /// "Alice@Example.com " is the same identity as "alice@example.com".
    /// The one normalisation of the system: the gateway is the only place
    /// that sees addresses and computes `email_hash`.
    public static func normalized(_ email: String) -> String {
        email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }

    /// HMAC-SHA256 of the normalised address, lower-case hex (the
    /// `email_hash` of the protos).
    public func hash(_ email: String) -> String {
        let digest = key.mac(Array(Self.normalized(email).utf8))
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: digest.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }

    /// The first character of the local part, "***", and the domain, e.g.
    /// "a***@example.com"; "***" alone when the address has no usable shape.
    public static func masked(_ email: String) -> String {
        let normalized = normalized(email)
        guard let at = normalized.lastIndex(of: "@"), at != normalized.startIndex else { return "***" }
        let domain = normalized[normalized.index(after: at)...]
        guard !domain.isEmpty else { return "***" }
        return "\(normalized[normalized.startIndex])***@\(domain)"
    }
}
