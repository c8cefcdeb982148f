import CryptoPrimitives
import FieldRules
import XCTest
@testable import Gateway

final class EmailIdentityTests: XCTestCase {
    func testHMACMatchesRFC4231TestCase6() {
        let key = HMACSHA256Key(secret: Array(repeating: 0xAA, count: 131))
        let mac = key.authenticationCode(for: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
        XCTAssertEqual(
            mac.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined(),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    func testHashIsStableAcrossSpellingsAndKeyed() throws {
        let identity = try EmailIdentity(hashKey: Array(repeating: 1, count: 32))
        let other = try EmailIdentity(hashKey: Array(repeating: 2, count: 32))
        XCTAssertEqual(identity.hash(" Alice@Example.COM "), identity.hash("alice@example.com"))
        XCTAssertNotEqual(identity.hash("alice@example.com"), identity.hash("bob@example.com"))
        XCTAssertNotEqual(identity.hash("alice@example.com"), other.hash("alice@example.com"))
        XCTAssertEqual(identity.hash("alice@example.com").count, 64)
        XCTAssertFalse(identity.hash("alice@example.com").contains("alice"))
        XCTAssertThrowsError(try EmailIdentity(hashKey: [1, 2, 3]))
    }

    func testMask() {
        XCTAssertEqual(EmailIdentity.masked("Alice@Example.com"), "a***@example.com")
        XCTAssertEqual(EmailIdentity.masked("@example.com"), "***")
        XCTAssertEqual(EmailIdentity.masked("nobody"), "***")
        XCTAssertEqual(EmailIdentity.masked("x@"), "***")
    }

    /// "é" composed (U+00E9) and decomposed ("e" + U+0301) are one identity:
    /// one hash, one mask. Before NFC they were two, and the starter pack
    /// (once per identity) could be bought twice.
    func testComposedAndDecomposedAddressesHashAlike() throws {
        let identity = try EmailIdentity(hashKey: Array(repeating: 7, count: 32))
        let composed = "Jos\u{E9}@Caf\u{E9}.example"
        let decomposed = "Jose\u{301}@Cafe\u{301}.example"
        XCTAssertNotEqual(Array(composed.utf8), Array(decomposed.utf8))
        XCTAssertEqual(identity.hash(composed), identity.hash(decomposed))
        XCTAssertEqual(identity.hash(" JOSE\u{301}@CAFE\u{301}.EXAMPLE\n"), identity.hash(composed))
        XCTAssertEqual(Array(EmailIdentity.masked(decomposed).utf8), Array("j***@caf\u{E9}.example".utf8))
        XCTAssertNotEqual(identity.hash(composed), identity.hash("jose@cafe.example"))
    }

    /// The gateway's mask is the one every service checks: an address with
    /// bidi or zero-width characters in its domain (which PointsService used
    /// to refuse after the purchase was paid) masks to something that passes.
    func testMaskAlwaysPassesTheServicesCheck() {
        for email in [
            "a@exa\u{202E}mple.com", "a@\u{2066}example\u{2069}.com", "\u{200F}a@example.com\u{200E}",
            "a@ex\u{200B}ample.com", "a@example.com\u{0}", "\u{202E}@example.com", "😀@例子.cn",
            "a@" + String(repeating: "d", count: 400),
        ] {
            let mask = EmailIdentity.masked(email)
            XCTAssertTrue(EmailMask.isValid(mask), email.debugDescription)
            XCTAssertEqual(mask, EmailMask.masked(email))
        }
        XCTAssertEqual(EmailIdentity.masked("a@exa\u{202E}mple.com"), "a***@example.com")
    }

    func testHashIsKeyedHMACSHA256OfTheNormalisedAddress() throws {
        let identity = try EmailIdentity(hashKey: Array("0123456789abcdef0123456789abcdef".utf8))
        // Reference values from Python's hmac module.
        XCTAssertEqual(
            identity.hash("alice@example.com"), "841240d2a5b6654b3ae21fc4499db7b7867077cdd67c3e16cef1f9843e27d1fa")
        XCTAssertEqual(identity.hash("  Alice@Example.COM \n"), identity.hash("alice@example.com"))
        let other = try EmailIdentity(hashKey: Array("another-secret-that-is-long-enough!!".utf8))
        XCTAssertEqual(
            other.hash("alice@example.com"), "e1bba18dd7c28d7d9e5790abdf60ffbb66c6bd4bf31155ef6ace840ae67c4e69")
    }
}
