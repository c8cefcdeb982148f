import CryptoPrimitives
import StrictJSON

/// Makes the JWT that authorizes each request ("Generating JSON Web Tokens
/// for API requests"): header `{"alg":"ES256","kid":<key id>,"typ":"JWT"}`,
/// claims `iss` (issuer id), `iat` and `exp` (UNIX seconds; Apple refuses
/// `exp` more than 60 minutes after `iat`), `aud` "appstoreconnect-v1" and
/// `bid` (bundle id), signed ES256 with the .p8 key as raw r||s and joined
/// base64url without padding. Pure apart from the signature's randomness.
public struct AppStoreAPITokenSigner: Sendable {
    public static let audience = "appstoreconnect-v1"
    public let credentials: AppStoreAPICredentials
    /// `exp - iat` in seconds.
    public let lifetimeSeconds: Int64

    public init(
        credentials: AppStoreAPICredentials,
        lifetimeSeconds: Int64 = AppStoreServerAPILimits.default.tokenLifetimeSeconds
    ) {
        precondition(
            lifetimeSeconds > 0 && lifetimeSeconds <= AppStoreServerAPILimits.tokenLifetimeSecondsMax,
            "Apple refuses JWTs living longer than 60 minutes")
        self.credentials = credentials
        self.lifetimeSeconds = lifetimeSeconds
    }

    /// A signed JWT issued at `issuedAtSeconds` (UNIX time).
    public func token(issuedAtSeconds: Int64) throws(AppStoreServerAPIError) -> String {
        let header = JSONValue.object(
            JSONObject([
                "alg": .string("ES256"), "kid": .string(credentials.keyID), "typ": .string("JWT"),
            ]))
        let claims = JSONValue.object(
            JSONObject([
                "iss": .string(credentials.issuerID),
                "iat": .integer(issuedAtSeconds),
                "exp": .integer(issuedAtSeconds + lifetimeSeconds),
                "aud": .string(Self.audience),
                "bid": .string(credentials.bundleID),
            ]))
        let signingInput =
            StrictBase64.encodeURL(JSONWriter.bytes(of: header)) + "."
            + StrictBase64.encodeURL(JSONWriter.bytes(of: claims))
        let signature: [UInt8]
        do {
            signature = try credentials.signingKey.sign(Array(signingInput.utf8))
        } catch {
            throw AppStoreServerAPIError(kind: .signingFailed, detail: "the JWT could not be signed: \(error)")
        }
        return signingInput + "." + StrictBase64.encodeURL(signature)
    }
}
