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
        // Two runs of non-space bytes, the scheme and the token, with spaces
        // around and between them and nothing else.
        let bytes = value.utf8
        var index = bytes.startIndex
        func run() -> Range<String.Index> {
            while index < bytes.endIndex && bytes[index] == UInt8(ascii: " ") { index = bytes.index(after: index) }
            let start = index
            while index < bytes.endIndex && bytes[index] != UInt8(ascii: " ") { index = bytes.index(after: index) }
            return start..<index
        }
        let scheme = run()
        let token = run()
        guard !token.isEmpty, run().isEmpty, value[scheme].equalsIgnoringASCIICase("bearer") else {
            throw AuthFailure.malformedAuthorizationHeader
        }
        guard value.utf8[token].allSatisfy(isToken68Byte) else { throw AuthFailure.malformedAuthorizationHeader }
        return String(value[token])
    }

    /// token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
    private static func isToken68Byte(_ byte: UInt8) -> Bool {
        StrictBase64.isURLAlphabetByte(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "~")
            || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
    }
}
