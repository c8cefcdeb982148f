import CryptoPrimitives
import FieldRules
import HTTPServer
import StrictJSON

/// Verifies compact JWS bearer tokens (RFC 7515/7519) and yields the user.
/// Order matters: size, structure, header, signature, and only then claims,
/// so nothing about claims is revealed for a forged token. The clock is an
/// argument (Unix seconds), so every check is testable without waiting.
///
/// Tokens that passed are remembered (`VerifiedTokenCache`, at most
/// `GatewayLimits.verifiedTokensCachedMax` of at most 2 KiB each): the same text gives the same
/// verdict on everything but time, so a repeated token only has its time
/// claims checked again, in the same order.
public struct JWTVerifier: Sendable {
    public let configuration: JWTVerifierConfiguration
    let verifiedTokens: VerifiedTokenCache

    public init(configuration: JWTVerifierConfiguration) {
        self.configuration = configuration
        verifiedTokens = VerifiedTokenCache(entriesMax: GatewayLimits.verifiedTokensCachedMax)
    }

    /// Authenticates a request from its headers.
    public func authenticate(headers: HTTPHeaders, nowSeconds: Int64) throws(AuthFailure) -> AuthenticatedUser {
        try verify(token: BearerCredentials.token(from: headers), nowSeconds: nowSeconds)
    }

    /// Verifies one compact token.
    public func verify(token: String, nowSeconds: Int64) throws(AuthFailure) -> AuthenticatedUser {
        if let known = verifiedTokens.entry(for: token) {
            do {
                try checkTimes(
                    expiry: known.expiry, notBefore: known.notBefore, issuedAt: known.issuedAt, nowSeconds: nowSeconds)
            } catch {
                if error == .expired { verifiedTokens.remove(token) }
                throw error
            }
            return known.user
        }
        let bytes = Array(token.utf8)
        guard bytes.count <= GatewayLimits.bearerTokenBytesMax else { throw AuthFailure.tokenTooLarge }
        let segments = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3, !segments[0].isEmpty, !segments[1].isEmpty else { throw AuthFailure.malformedToken }

        let header = try Self.decodeObject(segments[0])
        let algorithm = try checkHeader(header)

        guard let signature = try? StrictBase64.decodeURL(segments[2]) else { throw AuthFailure.malformedToken }
        let signingInput = Array(bytes[0..<(segments[0].count + 1 + segments[1].count)])
        guard configuration.keys.verify(algorithm: algorithm, signingInput: signingInput, signature: signature) else {
            throw AuthFailure.invalidSignature
        }

        let claims = try Self.decodeObject(segments[1])
        let verified = try checkClaims(claims, nowSeconds: nowSeconds)
        if bytes.count <= GatewayLimits.verifiedTokenCachedBytesMax {
            verifiedTokens.store(verified, for: token, nowSeconds: nowSeconds)
        }
        return verified.user
    }

    private static func decodeObject(_ segment: ArraySlice<UInt8>) throws(AuthFailure) -> JSONObject {
        guard let json = try? StrictBase64.decodeURL(segment),
            case .object(let object)? = try? StrictJSONParser(
                documentBytesMax: GatewayLimits.bearerTokenBytesMax, depthMax: GatewayLimits.jsonDepthMax
            ).parse(json)
        else { throw AuthFailure.malformedToken }
        return object
    }

    private func checkHeader(_ header: JSONObject) throws(AuthFailure) -> JWTAlgorithm {
        guard case .string(let name)? = header["alg"] else { throw AuthFailure.malformedToken }
        guard let algorithm = JWTAlgorithm(rawValue: name) else { throw AuthFailure.unsupportedAlgorithm }
        guard configuration.keys.algorithms.contains(algorithm) else { throw AuthFailure.algorithmNotAllowed }
        if header["crit"] != nil { throw AuthFailure.unknownCriticalHeader }
        if let type = header["typ"] {
            guard case .string(let text) = type, ["jwt", "at+jwt"].contains(text.lowercasedASCII) else {
                throw AuthFailure.malformedToken
            }
        }
        return algorithm
    }

    private func checkClaims(_ claims: JSONObject, nowSeconds: Int64) throws(AuthFailure) -> VerifiedTokenCache.Entry {
        guard let expiry = try Self.numericDate(claims, "exp") else { throw AuthFailure.missingClaim("exp") }
        let notBefore = try Self.numericDate(claims, "nbf")
        let issuedAt = try Self.numericDate(claims, "iat")
        try checkTimes(expiry: expiry, notBefore: notBefore, issuedAt: issuedAt, nowSeconds: nowSeconds)

        guard let issuerValue = claims["iss"] else { throw AuthFailure.missingClaim("iss") }
        guard case .string(let issuer) = issuerValue else { throw AuthFailure.invalidClaim("iss") }
        // Compared as bytes (RFC 7519 2: no transformation), never as
        // Swift strings, which equate canonically equivalent Unicode.
        guard issuer.utf8.elementsEqual(configuration.issuer.utf8) else { throw AuthFailure.issuerMismatch }
        try checkAudience(claims["aud"])

        guard let subjectValue = claims["sub"] else { throw AuthFailure.missingClaim("sub") }
        guard case .string(let subject) = subjectValue, let userId = try? UUIDRule.canonical(subject) else {
            throw AuthFailure.invalidClaim("sub")
        }
        guard let emailValue = claims["email"] else { throw AuthFailure.missingClaim("email") }
        guard case .string(let email) = emailValue, Self.isPlausibleEmail(email) else {
            throw AuthFailure.invalidClaim("email")
        }
        return VerifiedTokenCache.Entry(
            user: AuthenticatedUser(userId: userId, email: email),
            expiry: expiry, notBefore: notBefore, issuedAt: issuedAt)
    }

    /// exp, then nbf, then iat, each with the clock leeway.
    private func checkTimes(expiry: Int64, notBefore: Int64?, issuedAt: Int64?, nowSeconds: Int64) throws(AuthFailure) {
        let leeway = configuration.clockLeewaySeconds
        if nowSeconds - leeway >= expiry { throw AuthFailure.expired }
        if let notBefore, nowSeconds + leeway < notBefore { throw AuthFailure.notYetValid }
        if let issuedAt, issuedAt > nowSeconds + leeway { throw AuthFailure.invalidClaim("iat") }
    }

    private func checkAudience(_ value: JSONValue?) throws(AuthFailure) {
        switch value {
        case nil:
            throw AuthFailure.missingClaim("aud")
        case .string(let audience)?:
            guard audience.utf8.elementsEqual(configuration.audience.utf8) else { throw AuthFailure.audienceMismatch }
        case .array(let elements)?:
            var audiences: [String] = []
            for element in elements {
                guard case .string(let audience) = element else { throw AuthFailure.invalidClaim("aud") }
                audiences.append(audience)
            }
            guard audiences.contains(where: { $0.utf8.elementsEqual(configuration.audience.utf8) }) else {
                throw AuthFailure.audienceMismatch
            }
        default:
            throw AuthFailure.invalidClaim("aud")
        }
    }

    /// A NumericDate claim as whole seconds (fractions floored), nil if absent.
    private static func numericDate(_ claims: JSONObject, _ name: String) throws(AuthFailure) -> Int64? {
        guard let value = claims[name] else { return nil }
        guard case .number(let number) = value else { throw AuthFailure.invalidClaim(name) }
        if let whole = number.int64Value { return whole }
        guard let double = number.doubleValue, double.isFinite, abs(double) < 1e15 else {
            throw AuthFailure.invalidClaim(name)
        }
        // Truncate, then step down for negatives: floor without libm.
        let truncated = Int64(double)
        return Double(truncated) > double ? truncated - 1 : truncated
    }

    /// One "@" with text on both sides, no whitespace or controls, at most
    /// 254 bytes. Deliverability is the identity provider's business.
    private static func isPlausibleEmail(_ email: String) -> Bool {
        let bytes = Array(email.utf8)
        guard bytes.count <= GatewayLimits.emailBytesMax, bytes.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else {
            return false
        }
        let parts = bytes.split(separator: UInt8(ascii: "@"), omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty
    }
}
