import CryptoPrimitives
import StrictJSON

/// Mints HS256 bearer tokens the way an identity provider would for the
/// gateway (`iss`, `aud`, `sub`, `email`, `iat`, `nbf`, `exp`).
struct HS256TokenMinter: Sendable {
    let secret: [UInt8]
    let issuer: String
    let audience: String

    func mint(userId: String, email: String, nowSeconds: Int64, lifetimeSeconds: Int64) -> String {
        let claims = JSONObject([
            "iss": .string(issuer), "aud": .string(audience), "sub": .string(userId), "email": .string(email),
            "iat": .integer(nowSeconds), "nbf": .integer(nowSeconds), "exp": .integer(nowSeconds + lifetimeSeconds),
        ])
        let header = StrictBase64.encodeURL(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = StrictBase64.encodeURL(JSONWriter.bytes(of: .object(claims)))
        let signingInput = header + "." + payload
        let code = HMACSHA256Key(secret: secret).authenticationCode(for: Array(signingInput.utf8))
        return signingInput + "." + StrictBase64.encodeURL(code)
    }
}
