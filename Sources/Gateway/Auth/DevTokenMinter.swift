import CryptoPrimitives
import StrictJSON

/// Mints HS256 tokens with the configured secret, for development and tests
/// (the future `Gateway mint-token` subcommand). Never enable in production
/// without the same secret discipline as the verifier's.
public struct DevTokenMinter: Sendable {
    private let key: HMACSHA256Key
    public let issuer: String
    public let audience: String

    public init(secret: [UInt8], issuer: String, audience: String) throws(JWTConfigurationError) {
        guard secret.count >= GatewayLimits.hmacSecretBytesMin else { throw JWTConfigurationError.secretTooShort }
        key = HMACSHA256Key(secret: secret)
        self.issuer = issuer
        self.audience = audience
    }

    /// A token for `userId` (a UUID) and `email`, valid from `issuedAtSeconds`
    /// for `lifetimeSeconds`.
    public func mint(userId: String, email: String, issuedAtSeconds: Int64, lifetimeSeconds: Int64 = 3600) -> String {
        precondition(lifetimeSeconds > 0)
        let header = JSONValue.object(JSONObject(["alg": .string("HS256"), "typ": .string("JWT")]))
        let claims = JSONValue.object(
            JSONObject([
                "iss": .string(issuer),
                "aud": .string(audience),
                "sub": .string(userId),
                "email": .string(email),
                "iat": .integer(issuedAtSeconds),
                "nbf": .integer(issuedAtSeconds),
                "exp": .integer(issuedAtSeconds + lifetimeSeconds),
            ]))
        return sign(header: header, claims: claims)
    }

    /// Signs arbitrary header and claims (tests use it to build odd tokens).
    public func sign(header: JSONValue, claims: JSONValue) -> String {
        let signingInput =
            StrictBase64.encodeURL(JSONWriter.bytes(of: header)) + "."
            + StrictBase64.encodeURL(JSONWriter.bytes(of: claims))
        return signingInput + "." + StrictBase64.encodeURL(key.authenticationCode(for: Array(signingInput.utf8)))
    }
}
