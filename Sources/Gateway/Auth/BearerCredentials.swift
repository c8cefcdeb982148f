import CryptoPrimitives
import HTTPServer

/// Extracts the token from `Authorization: Bearer <token>` (RFC 6750 §2.1):
/// exactly one header, scheme case-insensitive, token68 characters only.
public enum BearerCredentials {
    public static func token(from headers: HTTPHeaders) throws(AuthFailure) -> String {
        let values = headers.values("authorization")
        guard !values.isEmpty else { throw AuthFailure.missingCredentials }
        guard values.count == 1 else { throw AuthFailure.malformedAuthorizationHeader }
        var value = values[0]
        guard value.utf8.count <= GatewayLimits.bearerTokenBytesMax + 64 else { throw AuthFailure.tokenTooLarge }
        // Two runs of non-space bytes, the scheme and the token, with spaces
        // around and between them and nothing else; read from the value's
        // contiguous UTF-8 (`withUTF8` copies only a bridged string, which a header value never is).
        let token: String? = value.withUTF8 { bytes -> String? in
            var index = 0
            func run() -> Range<Int> {
                while index < bytes.count && bytes[index] == UInt8(ascii: " ") { index += 1 }
                let start = index
                while index < bytes.count && bytes[index] != UInt8(ascii: " ") { index += 1 }
                return start..<index
            }
            let scheme = run()
            let token = run()
            guard !token.isEmpty, run().isEmpty, Self.isBearer(UnsafeBufferPointer(rebasing: bytes[scheme])) else {
                return nil
            }
            let tokenBytes = UnsafeBufferPointer(rebasing: bytes[token])
            guard tokenBytes.allSatisfy(isToken68Byte) else { return nil }
            return String(decoding: tokenBytes, as: UTF8.self)
        }
        guard let token else { throw AuthFailure.malformedAuthorizationHeader }
        return token
    }

    /// "Bearer" in any case (RFC 9110 §11.1: the scheme is case-insensitive).
    private static func isBearer(_ scheme: UnsafeBufferPointer<UInt8>) -> Bool {
        let expected: StaticString = "bearer"
        guard scheme.count == expected.utf8CodeUnitCount else { return false }
        for offset in 0..<scheme.count where scheme[offset] | 0x20 != expected.utf8Start[offset] { return false }
        return true
    }

    /// token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
    private static func isToken68Byte(_ byte: UInt8) -> Bool {
        StrictBase64.isURLAlphabetByte(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "~")
            || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
    }
}
