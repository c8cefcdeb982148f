import XCTest
@testable import Gateway

final class EmailIdentityTests: XCTestCase {
    func testHMACMatchesRFC4231TestCase6() {
        let key = HMACSHA256Key(secret: Array(repeating: 0xAA, count: 131))
        let mac = key.mac(Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
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

    func testHashIsKeyedHMACSHA256OfTheNormalisedAddress() throws {
        let identity = try EmailIdentity(hashKey: Array("0123456789abcdef0123456789abcdef".utf8))
        // Reference values from Python's hmac module.
        XCTAssertEqual(identity.hash("alice@example.com"), "841240d2a5b6654b3ae21fc4499db7b7867077cdd67c3e16cef1f9843e27d1fa")
        XCTAssertEqual(identity.hash("  Alice@Example.COM \n"), identity.hash("alice@example.com"))
        let other = try EmailIdentity(hashKey: Array("another-secret-that-is-long-enough!!".utf8))
        XCTAssertEqual(other.hash("alice@example.com"), "e1bba18dd7c28d7d9e5790abdf60ffbb66c6bd4bf31155ef6ace840ae67c4e69")
    }
}
