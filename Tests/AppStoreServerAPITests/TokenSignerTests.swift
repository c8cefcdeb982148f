@testable import AppStoreServerAPI
import AppStoreVerification
import CryptoPrimitives
import StrictJSON
import XCTest

/// The JWT exactly as "Generating JSON Web Tokens for API requests" describes it.
final class TokenSignerTests: XCTestCase {
    private func decode(_ token: String) throws -> (
        header: JSONValue, claims: JSONValue, signingInput: [UInt8], signature: [UInt8]
    ) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        XCTAssertEqual(parts.count, 3)
        let parser = StrictJSONParser(documentBytesMax: 4096, depthMax: 4)
        let header = try parser.parse(StrictBase64.decodeURL(Array(parts[0].utf8)))
        let claims = try parser.parse(StrictBase64.decodeURL(Array(parts[1].utf8)))
        let signature = try StrictBase64.decodeURL(Array(parts[2].utf8))
        return (header, claims, Array("\(parts[0]).\(parts[1])".utf8), signature)
    }

    func testHeaderAndClaimsAreExactlyAsDocumented() throws {
        let credentials = try TestKeys.credentials()
        let token = try AppStoreAPITokenSigner(credentials: credentials, lifetimeSeconds: 1200).token(
            issuedAtSeconds: 1_700_000_000)
        XCTAssertFalse(token.contains("="), "base64url without padding")
        let (header, claims, signingInput, signature) = try decode(token)
        guard case .object(let headerObject) = header, case .object(let claimObject) = claims else {
            return XCTFail("not objects")
        }
        XCTAssertEqual(headerObject.keys.sorted(), ["alg", "kid", "typ"])
        XCTAssertEqual(header["alg"], .string("ES256"))
        XCTAssertEqual(header["kid"], .string(TestKeys.keyID))
        XCTAssertEqual(header["typ"], .string("JWT"))
        XCTAssertEqual(claimObject.keys.sorted(), ["aud", "bid", "exp", "iat", "iss"])
        XCTAssertEqual(claims["iss"], .string(TestKeys.issuerID))
        XCTAssertEqual(claims["iat"], .integer(1_700_000_000))
        XCTAssertEqual(claims["exp"], .integer(1_700_001_200))
        XCTAssertEqual(claims["aud"], .string("appstoreconnect-v1"))
        XCTAssertEqual(claims["bid"], .string(TestKeys.bundleID))
        // ES256 in JOSE form: raw r||s, not DER, verifiable with the key.
        XCTAssertEqual(signature.count, 64)
        XCTAssertNotEqual(signature.first, 0x30, "a DER signature would start with SEQUENCE")
        XCTAssertTrue(credentials.signingKey.isValidSignature(signature, for: signingInput))
        let other = try TestKeys.credentials()
        XCTAssertFalse(other.signingKey.isValidSignature(signature, for: signingInput))
    }

    func testDefaultLifetimeIsWithinApplesHour() throws {
        let limits = AppStoreServerAPILimits.default
        XCTAssertLessThanOrEqual(limits.tokenLifetimeSeconds, 3600)
        XCTAssertLessThanOrEqual(limits.tokenReuseSeconds * 2, limits.tokenLifetimeSeconds)
        let token = try AppStoreAPITokenSigner(credentials: try TestKeys.credentials()).token(issuedAtSeconds: 100)
        let claims = try decode(token).claims
        XCTAssertEqual(claims["exp"], .integer(100 + limits.tokenLifetimeSeconds))
    }

    func testIdsWithQuotesStayValidJSON() throws {
        var credentials = try TestKeys.credentials()
        credentials.keyID = "A\"B\\C"
        let token = try AppStoreAPITokenSigner(credentials: credentials).token(issuedAtSeconds: 1)
        XCTAssertEqual(try decode(token).header["kid"], .string("A\"B\\C"))
    }

    func testCacheReusesOnlyWhileYoungThenSignsAnew() throws {
        let now = LockedClock(seconds: 1000)
        let cache = TokenCache(
            signer: AppStoreAPITokenSigner(credentials: try TestKeys.credentials(), lifetimeSeconds: 1200),
            reuseSeconds: 300, nowSeconds: { now.seconds })
        let first = try cache.token()
        now.seconds = 1299
        XCTAssertEqual(try cache.token(), first)
        now.seconds = 1300
        let second = try cache.token()
        XCTAssertNotEqual(second, first)
        XCTAssertEqual(try decode(second).claims["iat"], .integer(1300))
        // A clock that went backwards never reuses a token "from the future".
        now.seconds = 1200
        XCTAssertNotEqual(try cache.token(), second)
    }

    func testCacheWithZeroReuseSignsEveryTime() throws {
        let cache = TokenCache(
            signer: AppStoreAPITokenSigner(credentials: try TestKeys.credentials()), reuseSeconds: 0, nowSeconds: { 5 })
        XCTAssertNotEqual(try cache.token(), try cache.token())
    }
}

/// A settable clock for tests.
final class LockedClock: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int64
    init(seconds: Int64) { value = seconds }
    var seconds: Int64 {
        get { lock.lock(); defer { lock.unlock() }; return value }
        set { lock.lock(); value = newValue; lock.unlock() }
    }
}
