import COpenSSL
import Foundation

/// Turns an email into the identity key of starter-pack eligibility:
/// hex HMAC-SHA256 under a server secret (EMAIL_HASH_SECRET) of the trimmed,
/// lower-cased address. Keyed so a leaked table cannot be reversed by
/// hashing candidate addresses.
public struct EmailHasher: Sendable {
    /// Why a hasher could not be made.
    public enum SetupError: Error, Equatable, Sendable {
        case secretMissing
        case secretTooShort(minimumBytes: Int)
    }

    private let key: [UInt8]

    public init(secret: String) throws(SetupError) {
        guard !secret.isEmpty else { throw SetupError.secretMissing }
        guard secret.utf8.count >= PointsLimits.emailHashSecretBytesMin else {
            throw SetupError.secretTooShort(minimumBytes: PointsLimits.emailHashSecretBytesMin)
        }
        key = Array(secret.utf8)
    }

    /// Reads EMAIL_HASH_SECRET.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws(SetupError) -> EmailHasher {
        try EmailHasher(secret: environment["EMAIL_HASH_SECRET"] ?? "")
    }

    /// The trimmed, lower-cased address that is hashed.
    public static func normalize(_ email: String) -> String {
        email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }

    /// 64 lower-case hex digits.
    public func hash(email: String) -> String {
        let message = Array(Self.normalize(email).utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var digestLength: UInt32 = 0
        let produced = key.withUnsafeBufferPointer { keyBuffer in
            message.withUnsafeBufferPointer { messageBuffer in
                digest.withUnsafeMutableBufferPointer { digestBuffer in
                    HMAC(EVP_sha256(), keyBuffer.baseAddress, Int32(keyBuffer.count),
                         messageBuffer.baseAddress, messageBuffer.count, digestBuffer.baseAddress, &digestLength)
                }
            }
        }
        precondition(produced != nil && digestLength == 32, "HMAC-SHA256 failed")
        return HexEncoding.lowercase(digest.prefix(Int(digestLength)))
    }
}
