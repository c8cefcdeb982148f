import COpenSSL
import Foundation

/// Mints HS256 bearer tokens the way an identity provider would for the
/// gateway (`iss`, `aud`, `sub`, `email`, `iat`, `nbf`, `exp`).
struct HS256TokenMinter: Sendable {
    let secret: [UInt8]
    let issuer: String
    let audience: String

    func mint(userId: String, email: String, nowSeconds: Int64, lifetimeSeconds: Int64) -> String {
        let claims: [String: Any] = [
            "iss": issuer, "aud": audience, "sub": userId, "email": email,
            "iat": nowSeconds, "nbf": nowSeconds, "exp": nowSeconds + lifetimeSeconds,
        ]
        let header = Base64URLText.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = Base64URLText.encode(Array((try? JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])) ?? Data()))
        let signingInput = header + "." + payload
        return signingInput + "." + Base64URLText.encode(Self.hmacSHA256(key: secret, message: Array(signingInput.utf8)))
    }

    /// HMAC-SHA256 through OpenSSL's one-shot HMAC().
    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBufferPointer { data in
                output.withUnsafeMutableBufferPointer { out in
                    HMAC(EVP_sha256(), keyBytes.baseAddress, Int32(keyBytes.count), data.baseAddress, data.count, out.baseAddress, &length)
                }
            }
        }
        precondition(result != nil && length == 32, "HMAC-SHA256 failed")
        return Array(output.prefix(Int(length)))
    }
}

/// Unpadded base64url (RFC 4648 §5), as JWTs use.
enum Base64URLText {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
