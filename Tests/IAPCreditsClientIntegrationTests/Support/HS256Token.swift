import COpenSSL
import Foundation

/// HS256 bearer tokens as the identity provider mints them.
enum HS256Token {
    static func mint(secret: String, claims: [String: Any]) -> String {
        let input = base64URL(Array(json(["alg": "HS256", "typ": "JWT"]).utf8)) + "." + base64URL(Array(json(claims).utf8))
        return input + "." + base64URL(hmacSHA256(key: Array(secret.utf8), message: Array(input.utf8)))
    }

    static func json(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    static func randomHex(_ bytes: Int) -> String {
        (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    private static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    private static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
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
