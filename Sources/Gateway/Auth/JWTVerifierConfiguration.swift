/// What a valid token must satisfy: keys, issuer, audience, clock leeway.
public struct JWTVerifierConfiguration: Sendable {
    public let keys: JWTKeySet
    /// JWT_ISSUER: `iss` must equal it.
    public let issuer: String
    /// JWT_AUDIENCE: `aud` (a string or an array) must contain it.
    public let audience: String
    public let clockLeewaySeconds: Int64

    public init(
        keys: JWTKeySet, issuer: String, audience: String,
        clockLeewaySeconds: Int64 = GatewayLimits.tokenClockLeewaySeconds
    ) {
        precondition(!issuer.isEmpty && !audience.isEmpty && clockLeewaySeconds >= 0)
        self.keys = keys
        self.issuer = issuer
        self.audience = audience
        self.clockLeewaySeconds = clockLeewaySeconds
    }

    /// Reads JWT_ISSUER, JWT_AUDIENCE, JWT_HS256_SECRET and/or
    /// JWT_ES256_PUBLIC_KEY (a PEM file path). Start-up only: `readFile`
    /// may block.
    public static func fromEnvironment(
        _ environment: [String: String],
        readFile: (String) throws -> [UInt8]
    ) throws(JWTConfigurationError) -> JWTVerifierConfiguration {
        guard let issuer = environment["JWT_ISSUER"], !issuer.isEmpty else {
            throw JWTConfigurationError.missingVariable("JWT_ISSUER")
        }
        guard let audience = environment["JWT_AUDIENCE"], !audience.isEmpty else {
            throw JWTConfigurationError.missingVariable("JWT_AUDIENCE")
        }
        let secret = environment["JWT_HS256_SECRET"].flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        var pem: [UInt8]?
        if let path = environment["JWT_ES256_PUBLIC_KEY"], !path.isEmpty {
            do {
                pem = try readFile(path)
            } catch {
                throw JWTConfigurationError.unreadableFile(path: path)
            }
        }
        let keys = try JWTKeySet(hs256Secret: secret, es256PublicKeyPEM: pem)
        return JWTVerifierConfiguration(keys: keys, issuer: issuer, audience: audience)
    }
}
