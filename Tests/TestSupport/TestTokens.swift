import CryptoPrimitives
import Foundation

/// HS256 bearer tokens as the identity provider mints them, plus the bad
/// ones the gateway must refuse.
public struct TestTokens: Sendable {
    public let secret: String
    public let issuer: String
    public let audience: String

    public init(secret: String, issuer: String, audience: String) {
        self.secret = secret
        self.issuer = issuer
        self.audience = audience
    }

    public func valid(userId: UUID, email: String) -> String {
        sign(claims: claims(userId: userId, email: email))
    }

    public func claims(
        userId: UUID, email: String, lifetimeSeconds: Int64 = 600,
        nowSeconds: Int64 = Int64(Date().timeIntervalSince1970)
    ) -> [String: Any] {
        [
            "iss": issuer, "aud": audience, "sub": userId.uuidString.lowercased(), "email": email,
            "iat": nowSeconds, "nbf": nowSeconds, "exp": nowSeconds + lifetimeSeconds,
        ]
    }

    public func sign(claims: [String: Any], header: [String: Any] = ["alg": "HS256", "typ": "JWT"], key: String? = nil)
        -> String
    {
        let input = Self.base64URL(Self.json(header)) + "." + Self.base64URL(Self.json(claims))
        let code = HMACSHA256Key(secret: Array((key ?? secret).utf8)).authenticationCode(for: Array(input.utf8))
        return input + "." + Self.base64URL(code)
    }

    /// `alg: none` with an empty signature.
    public func unsigned(claims: [String: Any]) -> String {
        Self.base64URL(Self.json(["alg": "none", "typ": "JWT"])) + "." + Self.base64URL(Self.json(claims)) + "."
    }

    public static func json(_ object: [String: Any]) -> [UInt8] {
        Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }

    public static func base64URL(_ bytes: [UInt8]) -> String {
        StrictBase64.encodeURL(bytes)
    }
}
