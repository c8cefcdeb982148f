import CryptoPrimitives
import FieldRules

/// The email as an identity for the starter-pack rule
/// (docs/protocols/payments/apple-iap-protocol.md, 5.2): a keyed hash of the
/// one normalisation (`EmailNormalization`: trim, NFC,
/// lower-case) that services store instead of the address, and the one mask
/// (`EmailMask`) as a snapshot for support. The address itself never leaves
/// the gateway and is never logged.
public struct EmailIdentity: Sendable {
    private let key: HMACSHA256Key

    /// - Parameter hashKey: the HMAC key (at least 32 bytes), shared by no one
    ///   else: without it the hashes cannot be brute-forced from address lists.
    public init(hashKey: [UInt8]) throws(JWTConfigurationError) {
        guard hashKey.count >= GatewayLimits.hmacSecretBytesMin else {
            throw JWTConfigurationError.emailHashSecretTooShort
        }
        key = HMACSHA256Key(secret: hashKey)
    }

    /// The address as an identity: `EmailNormalization` (trim, Unicode NFC,
    /// locale-independent lower case). Re-registering with
    /// "Alice@Example.com " is the same identity as "alice@example.com".
    public static func normalized(_ email: String) -> String {
        EmailNormalization.normalized(email)
    }

    /// HMAC-SHA256 of the normalised address, lower-case hex (the
    /// `email_hash` of the protos).
    public func hash(_ email: String) -> String {
        let digest = key.authenticationCode(for: Array(Self.normalized(email).utf8))
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: digest.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }

    /// The first safe character of the local part, "***", and the safe
    /// characters of the domain, e.g. "a***@example.com"; "***" alone when
    /// the address has no usable shape. Always passes `EmailMask.isValid`,
    /// the check PaymentsService and PointsService apply.
    public static func masked(_ email: String) -> String {
        EmailMask.masked(email)
    }
}
