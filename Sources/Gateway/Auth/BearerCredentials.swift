import CryptoPrimitives
import HTTPServer

/// Extracts the token from `Authorization: Bearer <token>` (RFC 6750 §2.1):
/// exactly one header, scheme case-insensitive, token68 characters only.
public enum BearerCredentials {
    public static func token(from headers: HTTPHeaders) throws(AuthFailure) -> String {
        let values = headers.values("authorization")
        guard !values.isEmpty else { throw AuthFailure.missingCredentials }
        guard values.count == 1 else { throw AuthFailure.malformedAuthorizationHeader }
        let value = values[0]
        guard value.utf8.count <= GatewayLimits.bearerTokenBytesMax + 64 else { throw AuthFailure.tokenTooLarge }
        let parts = value.utf8.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        guard parts.count == 2, Substring(parts[0]).equalsIgnoringASCIICase("bearer") else {
            throw AuthFailure.malformedAuthorizationHeader
        }
        let token = parts[1]
        guard token.allSatisfy(isToken68Byte) else { throw AuthFailure.malformedAuthorizationHeader }
        return String(Substring(token))
    }

    /// token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
    private static func isToken68Byte(_ byte: UInt8) -> Bool {
        StrictBase64.isURLAlphabetByte(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "~")
            || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
    }
}
