import CryptoPrimitives
import HTTPServer
import XCTest
import StrictJSON
@testable import Gateway

final class JWTVerifierTests: XCTestCase {
    private let secret = Array("0123456789abcdef0123456789abcdef-dev-secret".utf8)
    private let issuer = "https://auth.example.test"
    private let audience = "iap-credits"
    private let userId = "3F2504E0-4F89-41D3-9A0C-0305E82C3301"
    private let email = "alice@example.com"
    private let now: Int64 = 1_780_000_000

    private var minter: DevTokenMinter { try! DevTokenMinter(secret: secret, issuer: issuer, audience: audience) }

    private func verifier(hs256: Bool = true, es256PEM: [UInt8]? = nil) throws -> JWTVerifier {
        let keys = try JWTKeySet(hs256Secret: hs256 ? secret : nil, es256PublicKeyPEM: es256PEM)
        return JWTVerifier(configuration: JWTVerifierConfiguration(keys: keys, issuer: issuer, audience: audience))
    }

    private func claims(_ overrides: [String: JSONValue?] = [:]) -> JSONValue {
        var base: [(String, JSONValue)] = [
            ("iss", .string(issuer)), ("aud", .string(audience)), ("sub", .string(userId)), ("email", .string(email)),
            ("iat", .integer(now - 10)), ("exp", .integer(now + 600)),
        ]
        for (key, value) in overrides {
            base.removeAll { $0.0 == key }
            if let value { base.append((key, value)) }
        }
        var object = JSONObject()
        for (key, value) in base { object.insert(key, value) }
        return .object(object)
    }

    private let hsHeader = JSONValue.object(JSONObject(["alg": .string("HS256"), "typ": .string("JWT")]))
    private let esHeader = JSONValue.object(JSONObject(["alg": .string("ES256"), "typ": .string("JWT")]))

    private func esToken(_ key: ES256SigningKey, header: JSONValue? = nil, claims: JSONValue) -> String {
        let input =
            StrictBase64.encodeURL(JSONWriter.bytes(of: header ?? esHeader)) + "."
            + StrictBase64.encodeURL(JSONWriter.bytes(of: claims))
        return input + "." + StrictBase64.encodeURL(try! key.sign(Array(input.utf8)))
    }

    private func rawToken(header: String, payload: String, signature: [UInt8]) -> String {
        StrictBase64.encodeURL(Array(header.utf8)) + "." + StrictBase64.encodeURL(Array(payload.utf8)) + "."
            + StrictBase64.encodeURL(signature)
    }

    private func failure(_ token: String, _ verifier: JWTVerifier, at time: Int64? = nil) -> AuthFailure? {
        do {
            _ = try verifier.verify(token: token, nowSeconds: time ?? now)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Valid tokens.

    func testValidHS256TokenFromTheDevMinter() throws {
        let token = minter.mint(userId: userId, email: email, issuedAtSeconds: now)
        let user = try verifier().verify(token: token, nowSeconds: now + 5)
        XCTAssertEqual(user, AuthenticatedUser(userId: userId.lowercased(), email: email))
    }

    func testValidES256Token() throws {
        let key = try ES256SigningKey()
        let verifier = try verifier(hs256: false, es256PEM: Array(key.publicKeyPEM.utf8))
        let user = try verifier.verify(token: esToken(key, claims: claims()), nowSeconds: now)
        XCTAssertEqual(user.userId, userId.lowercased())
    }

    /// JWT_ES256_PUBLIC_KEY may hold several keys (an issuer rotating its
    /// signing key): a token signed with any of them passes, one signed
    /// with none fails, and more than the bound is a configuration error.
    func testAnES256BundleAcceptsEachOfItsKeys() throws {
        let current = try ES256SigningKey()
        let next = try ES256SigningKey()
        let stranger = try ES256SigningKey()
        let bundle = Array(("# the issuer's keys\n" + current.publicKeyPEM + "\n" + next.publicKeyPEM).utf8)
        let verifier = try verifier(hs256: false, es256PEM: bundle)
        XCTAssertEqual(
            try verifier.verify(token: esToken(current, claims: claims()), nowSeconds: now).userId, userId.lowercased())
        XCTAssertEqual(
            try verifier.verify(token: esToken(next, claims: claims()), nowSeconds: now).userId, userId.lowercased())
        XCTAssertEqual(failure(esToken(stranger, claims: claims()), verifier), .invalidSignature)
        XCTAssertEqual(try JWTKeySet(hs256Secret: nil, es256PublicKeyPEM: bundle).es256PublicKeys.count, 2)
        let five = try (0..<5).map { _ in try ES256SigningKey().publicKeyPEM }.joined(separator: "\n")
        XCTAssertThrowsError(try JWTKeySet(hs256Secret: nil, es256PublicKeyPEM: Array(five.utf8)))
        let broken = Array(
            (current.publicKeyPEM + "\n-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n").utf8)
        XCTAssertThrowsError(
            try JWTKeySet(hs256Secret: nil, es256PublicKeyPEM: broken), "every key of the bundle must read")
    }

    /// iss and aud are compared as bytes: Swift's == equates canonically
    /// equivalent strings ("é" and "e" + U+0301), RFC 7519 does not.
    func testIssuerAndAudienceAreComparedAsBytes() throws {
        let keys = try JWTKeySet(hs256Secret: secret, es256PublicKeyPEM: nil)
        let composed = JWTVerifier(
            configuration: JWTVerifierConfiguration(keys: keys, issuer: "https://caf\u{E9}.test", audience: "\u{E9}"))
        XCTAssertEqual(
            failure(
                minter.sign(
                    header: hsHeader,
                    claims: claims(["iss": .string("https://cafe\u{301}.test"), "aud": .string("\u{E9}")])),
                composed), .issuerMismatch)
        XCTAssertEqual(
            failure(
                minter.sign(
                    header: hsHeader,
                    claims: claims(["iss": .string("https://caf\u{E9}.test"), "aud": .string("e\u{301}")])),
                composed), .audienceMismatch)
        XCTAssertEqual(
            failure(
                minter.sign(
                    header: hsHeader,
                    claims: claims(["iss": .string("https://caf\u{E9}.test"), "aud": .array([.string("e\u{301}")])])),
                composed), .audienceMismatch)
        XCTAssertNil(
            failure(
                minter.sign(
                    header: hsHeader,
                    claims: claims(["iss": .string("https://caf\u{E9}.test"), "aud": .string("\u{E9}")])), composed))
    }

    func testAudienceMayBeAnArray() throws {
        let token = minter.sign(
            header: hsHeader, claims: claims(["aud": .array([.string("other"), .string(audience)])]))
        XCTAssertNoThrow(try verifier().verify(token: token, nowSeconds: now))
        let without = minter.sign(header: hsHeader, claims: claims(["aud": .array([.string("other")])]))
        XCTAssertEqual(failure(without, try verifier()), .audienceMismatch)
        let badElement = minter.sign(header: hsHeader, claims: claims(["aud": .array([.integer(1)])]))
        XCTAssertEqual(failure(badElement, try verifier()), .invalidClaim("aud"))
    }

    func testAuthenticateFromHeaders() throws {
        let token = minter.mint(userId: userId, email: email, issuedAtSeconds: now)
        let headers = HTTPHeaders(["Authorization": "bearer " + token])
        XCTAssertEqual(try verifier().authenticate(headers: headers, nowSeconds: now).email, email)
    }

    // MARK: Time.

    func testExpiryWithLeeway() throws {
        let token = minter.sign(header: hsHeader, claims: claims(["exp": .integer(now)]))
        let verifier = try verifier()
        XCTAssertNil(failure(token, verifier, at: now + 29), "inside the 30 s leeway")
        XCTAssertEqual(failure(token, verifier, at: now + 30), .expired)
        XCTAssertEqual(
            failure(minter.sign(header: hsHeader, claims: claims(["exp": nil])), verifier), .missingClaim("exp"))
        XCTAssertEqual(
            failure(minter.sign(header: hsHeader, claims: claims(["exp": .string("soon")])), verifier),
            .invalidClaim("exp"))
    }

    func testNotBeforeInTheFuture() throws {
        let token = minter.sign(header: hsHeader, claims: claims(["nbf": .integer(now + 100)]))
        XCTAssertEqual(failure(token, try verifier()), .notYetValid)
        XCTAssertNil(failure(token, try verifier(), at: now + 71))
        let issuedLater = minter.sign(header: hsHeader, claims: claims(["iat": .integer(now + 3600)]))
        XCTAssertEqual(failure(issuedLater, try verifier()), .invalidClaim("iat"))
    }

    // MARK: Issuer, audience, subject, email.

    func testWrongIssuerAndAudience() throws {
        XCTAssertEqual(
            failure(minter.sign(header: hsHeader, claims: claims(["iss": .string("https://evil")])), try verifier()),
            .issuerMismatch)
        XCTAssertEqual(
            failure(minter.sign(header: hsHeader, claims: claims(["iss": nil])), try verifier()), .missingClaim("iss"))
        XCTAssertEqual(
            failure(minter.sign(header: hsHeader, claims: claims(["aud": .string("other")])), try verifier()),
            .audienceMismatch)
        XCTAssertEqual(
            failure(minter.sign(header: hsHeader, claims: claims(["aud": nil])), try verifier()), .missingClaim("aud"))
    }

    func testMissingOrBadSubjectAndEmail() throws {
        let verifier = try verifier()
        XCTAssertEqual(
            failure(minter.sign(header: hsHeader, claims: claims(["sub": nil])), verifier), .missingClaim("sub"))
        XCTAssertEqual(
            failure(minter.sign(header: hsHeader, claims: claims(["sub": .string("42")])), verifier),
            .invalidClaim("sub"))
        XCTAssertEqual(
            failure(minter.sign(header: hsHeader, claims: claims(["sub": .integer(42)])), verifier),
            .invalidClaim("sub"))
        XCTAssertEqual(
            failure(minter.sign(header: hsHeader, claims: claims(["email": nil])), verifier), .missingClaim("email"))
        for bad: JSONValue in [
            .string(""), .string("no-at"), .string("a@b@c"), .string("a b@c"), .string("@c"), .bool(true),
        ] {
            XCTAssertEqual(
                failure(minter.sign(header: hsHeader, claims: claims(["email": bad])), verifier), .invalidClaim("email")
            )
        }
    }

    // MARK: Forgery.

    func testForgedSignatures() throws {
        let verifier = try verifier()
        let token = minter.mint(userId: userId, email: email, issuedAtSeconds: now)
        var parts = token.split(separator: ".").map(String.init)
        let otherMinter = try DevTokenMinter(secret: Array(repeating: 7, count: 32), issuer: issuer, audience: audience)
        XCTAssertEqual(
            failure(otherMinter.mint(userId: userId, email: email, issuedAtSeconds: now), verifier), .invalidSignature)
        // A payload swapped under a valid signature.
        let tampered = JSONWriter.bytes(of: claims(["sub": .string("00000000-0000-0000-0000-000000000000")]))
        parts[1] = StrictBase64.encodeURL(tampered)
        XCTAssertEqual(failure(parts.joined(separator: "."), verifier), .invalidSignature)
        // Truncated signature.
        let original = token.split(separator: ".").map(String.init)
        XCTAssertEqual(
            failure(original[0] + "." + original[1] + "." + String(original[2].dropLast(3)), verifier),
            .invalidSignature)

        let key = try ES256SigningKey()
        let other = try ES256SigningKey()
        let esVerifier = try self.verifier(hs256: false, es256PEM: Array(key.publicKeyPEM.utf8))
        XCTAssertEqual(failure(esToken(other, claims: claims()), esVerifier), .invalidSignature)
        var esParts = esToken(key, claims: claims()).split(separator: ".").map(String.init)
        var signature = try StrictBase64.decodeURL(Array(esParts[2].utf8))
        signature[40] ^= 0x01
        esParts[2] = StrictBase64.encodeURL(signature)
        XCTAssertEqual(failure(esParts.joined(separator: "."), esVerifier), .invalidSignature)
        XCTAssertEqual(
            failure(
                rawToken(header: #"{"alg":"ES256"}"#, payload: "{}", signature: [UInt8](repeating: 0, count: 64)),
                esVerifier), .invalidSignature)
    }

    func testAlgNoneIsRejected() throws {
        let verifier = try verifier()
        let payload = String(decoding: JSONWriter.bytes(of: claims()), as: UTF8.self)
        XCTAssertEqual(
            failure(rawToken(header: #"{"alg":"none"}"#, payload: payload, signature: []), verifier),
            .unsupportedAlgorithm)
        XCTAssertEqual(
            failure(rawToken(header: #"{"alg":"None"}"#, payload: payload, signature: []), verifier),
            .unsupportedAlgorithm)
        XCTAssertEqual(
            failure(rawToken(header: #"{"alg":"RS256"}"#, payload: payload, signature: [1]), verifier),
            .unsupportedAlgorithm)
        XCTAssertEqual(
            failure(rawToken(header: #"{"typ":"JWT"}"#, payload: payload, signature: [1]), verifier), .malformedToken)
    }

    func testAlgorithmConfusionWithThePublicKeyAsHMACSecretFails() throws {
        let key = try ES256SigningKey()
        let pem = Array(key.publicKeyPEM.utf8)
        // Attacker signs HS256 using the (public) PEM bytes as the secret.
        let attacker = try DevTokenMinter(secret: pem, issuer: issuer, audience: audience)
        let forged = attacker.mint(userId: userId, email: email, issuedAtSeconds: now)
        XCTAssertEqual(failure(forged, try verifier(hs256: false, es256PEM: pem)), .algorithmNotAllowed)
        // With both keys configured HS256 is checked against the real secret only.
        XCTAssertEqual(failure(forged, try verifier(hs256: true, es256PEM: pem)), .invalidSignature)
        // And an ES256 token is refused by an HS256-only verifier.
        XCTAssertEqual(failure(esToken(key, claims: claims()), try verifier()), .algorithmNotAllowed)
    }

    func testCritHeaderIsRejected() throws {
        let header = JSONValue.object(JSONObject(["alg": .string("HS256"), "crit": .array([.string("exp")])]))
        XCTAssertEqual(failure(minter.sign(header: header, claims: claims()), try verifier()), .unknownCriticalHeader)
        let badType = JSONValue.object(JSONObject(["alg": .string("HS256"), "typ": .string("JWE")]))
        XCTAssertEqual(failure(minter.sign(header: badType, claims: claims()), try verifier()), .malformedToken)
    }

    // MARK: Malformed input.

    func testMalformedTokens() throws {
        let verifier = try verifier()
        let good = minter.mint(userId: userId, email: email, issuedAtSeconds: now).split(separator: ".").map(
            String.init)
        XCTAssertEqual(failure("abc", verifier), .malformedToken)
        XCTAssertEqual(failure(good[0] + "." + good[1], verifier), .malformedToken)
        XCTAssertEqual(failure(good.joined(separator: ".") + ".x.y", verifier), .malformedToken)
        XCTAssertEqual(failure("." + good[1] + "." + good[2], verifier), .malformedToken)
        XCTAssertEqual(failure(good[0] + "=." + good[1] + "." + good[2], verifier), .malformedToken)
        XCTAssertEqual(
            failure(good[0].replacingOccurrences(of: "J", with: "+") + "." + good[1] + "." + good[2], verifier),
            .malformedToken)
        XCTAssertEqual(failure(good[0] + "." + good[1] + "." + good[2] + "=", verifier), .malformedToken)
        // Header that is JSON but not an object, and one with duplicate keys.
        XCTAssertEqual(
            failure(rawToken(header: #"["HS256"]"#, payload: "{}", signature: [1]), verifier), .malformedToken)
        XCTAssertEqual(
            failure(rawToken(header: #"{"alg":"HS256","alg":"none"}"#, payload: "{}", signature: [1]), verifier),
            .malformedToken)
        // Duplicate claims under a valid signature.
        let duplicateClaims =
            #"{"iss":"\#(issuer)","aud":"\#(audience)","sub":"\#(userId)","sub":"00000000-0000-0000-0000-000000000000","email":"a@b","exp":\#(now + 60)}"#
        let header = StrictBase64.encodeURL(JSONWriter.bytes(of: hsHeader))
        let input = header + "." + StrictBase64.encodeURL(Array(duplicateClaims.utf8))
        let mac = HMACSHA256Key(secret: secret).authenticationCode(for: Array(input.utf8))
        XCTAssertEqual(failure(input + "." + StrictBase64.encodeURL(mac), verifier), .malformedToken)
    }

    func testOversizedToken() throws {
        let padding = String(repeating: "x", count: GatewayLimits.bearerTokenBytesMax)
        let token = minter.sign(header: hsHeader, claims: claims(["pad": .string(padding)]))
        XCTAssertEqual(failure(token, try verifier()), .tokenTooLarge)
    }

    func testAuthorizationHeaderParsing() {
        XCTAssertThrowsError(try BearerCredentials.token(from: HTTPHeaders())) {
            XCTAssertEqual($0 as? AuthFailure, .missingCredentials)
        }
        for bad in [
            "Basic abc", "Bearer", "Bearer a b", "Bearer a\"b", "Token abc", " ", "Bearer ", "Bearer\ta", "Bearer a\tb",
            "Bearerx a",
        ] {
            XCTAssertThrowsError(try BearerCredentials.token(from: HTTPHeaders(["Authorization": bad])), bad) {
                XCTAssertEqual($0 as? AuthFailure, .malformedAuthorizationHeader, bad)
            }
        }
        XCTAssertThrowsError(
            try BearerCredentials.token(from: HTTPHeaders(["Authorization": "Bearer a", "authorization": "Bearer b"])))
        XCTAssertEqual(try BearerCredentials.token(from: HTTPHeaders(["Authorization": "BEARER a.b.c"])), "a.b.c")
        // Spaces around and between the two parts do not matter (one or more, as before).
        XCTAssertEqual(try BearerCredentials.token(from: HTTPHeaders(["Authorization": "  Bearer   a.b.c  "])), "a.b.c")
    }

    func testFailureProblemIs401WithChallengeAndNoToken() {
        let problem = AuthFailure.invalidSignature.problem
        XCTAssertEqual(problem.status, 401)
        XCTAssertEqual(
            problem.response.headers.first("www-authenticate"), #"Bearer realm="iap-credits", error="invalid_token""#)
        XCTAssertEqual(
            AuthFailure.missingCredentials.problem.response.headers.first("www-authenticate"),
            #"Bearer realm="iap-credits""#)
        XCTAssertTrue(ProblemCode.unauthenticated.retryable)
    }

    // MARK: Configuration.

    func testKeyConfiguration() throws {
        XCTAssertThrowsError(try JWTKeySet(hs256Secret: nil, es256PublicKeyPEM: nil)) {
            XCTAssertEqual($0 as? JWTConfigurationError, .noKeyConfigured)
        }
        XCTAssertThrowsError(try JWTKeySet(hs256Secret: Array(repeating: 1, count: 31), es256PublicKeyPEM: nil)) {
            XCTAssertEqual($0 as? JWTConfigurationError, .secretTooShort)
        }
        XCTAssertThrowsError(try JWTKeySet(hs256Secret: nil, es256PublicKeyPEM: Array("not a pem".utf8)))
        let wrongCurve = PEMBlock(label: "PUBLIC KEY", der: try ECPrivateKey(generating: .p384).publicKeySPKIDER())
        XCTAssertThrowsError(try JWTKeySet(hs256Secret: nil, es256PublicKeyPEM: Array(wrongCurve.text.utf8))) {
            XCTAssertEqual($0 as? JWTConfigurationError, .invalidPublicKey("not an EC P-256 key"))
        }
    }

    func testConfigurationFromEnvironment() throws {
        let pem = Array(try ES256SigningKey().publicKeyPEM.utf8)
        let environment = [
            "JWT_ISSUER": issuer, "JWT_AUDIENCE": audience, "JWT_ES256_PUBLIC_KEY": "/keys/jwt.pem",
            "JWT_HS256_SECRET": String(decoding: secret, as: UTF8.self),
        ]
        let configuration = try JWTVerifierConfiguration.fromEnvironment(environment) { path in
            XCTAssertEqual(path, "/keys/jwt.pem")
            return pem
        }
        XCTAssertEqual(configuration.keys.algorithms, [.hs256, .es256])
        XCTAssertEqual(configuration.clockLeewaySeconds, 30)
        XCTAssertThrowsError(try JWTVerifierConfiguration.fromEnvironment(["JWT_AUDIENCE": audience]) { _ in [] }) {
            XCTAssertEqual($0 as? JWTConfigurationError, .missingVariable("JWT_ISSUER"))
        }
        struct Unreadable: Error {}
        XCTAssertThrowsError(try JWTVerifierConfiguration.fromEnvironment(environment) { _ in throw Unreadable() }) {
            XCTAssertEqual($0 as? JWTConfigurationError, .unreadableFile(path: "/keys/jwt.pem"))
        }
    }
}

/// The verified-token cache changes nothing but the cost of a repeated token.
final class VerifiedTokenCacheTests: XCTestCase {
    private let secret = Array("0123456789abcdef0123456789abcdef-dev-secret".utf8)
    private let now: Int64 = 1_780_000_000

    private func verifier() throws -> JWTVerifier {
        JWTVerifier(
            configuration: JWTVerifierConfiguration(
                keys: try JWTKeySet(hs256Secret: secret, es256PublicKeyPEM: nil),
                issuer: "https://auth.example.test", audience: "iap-credits"))
    }

    private func token(
        userId: String = "3f2504e0-4f89-41d3-9a0c-0305e82c3301", issuedAt: Int64? = nil, notBefore: Int64? = nil,
        expiry: Int64? = nil, issuer: String = "https://auth.example.test"
    ) -> String {
        var claims = JSONObject()
        claims.insert("iss", .string(issuer))
        claims.insert("aud", .string("iap-credits"))
        claims.insert("sub", .string(userId))
        claims.insert("email", .string("alice@example.com"))
        claims.insert("iat", .integer(issuedAt ?? now - 10))
        if let notBefore { claims.insert("nbf", .integer(notBefore)) }
        claims.insert("exp", .integer(expiry ?? now + 600))
        let header = JSONValue.object(JSONObject(["alg": .string("HS256"), "typ": .string("JWT")]))
        let input =
            StrictBase64.encodeURL(JSONWriter.bytes(of: header)) + "."
            + StrictBase64.encodeURL(JSONWriter.bytes(of: .object(claims)))
        let signature = HMACSHA256Key(secret: secret).authenticationCode(for: Array(input.utf8))
        return input + "." + StrictBase64.encodeURL(signature)
    }

    func testARepeatedTokenGivesTheSameUserAndIsRememberedOnce() throws {
        let verifier = try verifier()
        let first = try verifier.verify(token: token(), nowSeconds: now)
        XCTAssertEqual(verifier.verifiedTokens.count, 1)
        XCTAssertEqual(try verifier.verify(token: token(), nowSeconds: now + 1), first)
        XCTAssertEqual(verifier.verifiedTokens.count, 1)
    }

    func testARememberedTokenStillExpiresAndIsForgotten() throws {
        let verifier = try verifier()
        let text = token(expiry: now + 100)
        _ = try verifier.verify(token: text, nowSeconds: now)
        let leeway = GatewayLimits.tokenClockLeewaySeconds
        XCTAssertNoThrow(try verifier.verify(token: text, nowSeconds: now + 100 + leeway - 1))
        XCTAssertThrowsError(try verifier.verify(token: text, nowSeconds: now + 100 + leeway)) {
            XCTAssertEqual($0 as? AuthFailure, .expired)
        }
        XCTAssertEqual(verifier.verifiedTokens.count, 0)
    }

    func testARememberedTokenIsCheckedAgainstNotBeforeAndIssuedAtOnAClockThatWentBack() throws {
        let verifier = try verifier()
        let leeway = GatewayLimits.tokenClockLeewaySeconds
        let text = token(issuedAt: now, notBefore: now)
        _ = try verifier.verify(token: text, nowSeconds: now)
        XCTAssertThrowsError(try verifier.verify(token: text, nowSeconds: now - leeway - 1)) {
            XCTAssertEqual($0 as? AuthFailure, .notYetValid)
        }
        let issuedLater = token(issuedAt: now + 5)
        _ = try verifier.verify(token: issuedLater, nowSeconds: now + 5)
        XCTAssertThrowsError(try verifier.verify(token: issuedLater, nowSeconds: now - leeway - 1)) {
            XCTAssertEqual($0 as? AuthFailure, .invalidClaim("iat"))
        }
    }

    func testRefusedTokensAreNotRemembered() throws {
        let verifier = try verifier()
        let wrongIssuer = token(issuer: "https://other.example.test")
        for _ in 0..<2 {
            XCTAssertThrowsError(try verifier.verify(token: wrongIssuer, nowSeconds: now)) {
                XCTAssertEqual($0 as? AuthFailure, .issuerMismatch)
            }
        }
        var forged = Array(token().utf8)
        forged[forged.count - 2] = forged[forged.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        XCTAssertThrowsError(try verifier.verify(token: String(decoding: forged, as: UTF8.self), nowSeconds: now)) {
            XCTAssertEqual($0 as? AuthFailure, .invalidSignature)
        }
        XCTAssertEqual(verifier.verifiedTokens.count, 0)
    }

    func testTheCacheIsBounded() {
        let cache = VerifiedTokenCache(entriesMax: 3)
        let user = AuthenticatedUser(userId: "u", email: "e")
        cache.store(.init(user: user, expiry: now - 1, notBefore: nil, issuedAt: nil), for: "expired", nowSeconds: now)
        for index in 0..<10 {
            cache.store(
                .init(user: user, expiry: now + 60, notBefore: nil, issuedAt: nil), for: "t\(index)", nowSeconds: now)
            XCTAssertLessThanOrEqual(cache.count, 3)
        }
        XCTAssertNil(cache.entry(for: "expired"))
        XCTAssertNotNil(cache.entry(for: "t9"))
    }
}
