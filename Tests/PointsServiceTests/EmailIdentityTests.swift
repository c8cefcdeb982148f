@testable import PointsService
import XCTest

final class EmailIdentityTests: XCTestCase {
    func testHashIsKeyedHMACSHA256OfTheNormalisedAddress() throws {
        let hasher = try EmailHasher(secret: "0123456789abcdef0123456789abcdef")
        // Reference value from Python's hmac module.
        XCTAssertEqual(hasher.hash(email: "alice@example.com"), "841240d2a5b6654b3ae21fc4499db7b7867077cdd67c3e16cef1f9843e27d1fa")
        XCTAssertEqual(hasher.hash(email: "  Alice@Example.COM \n"), hasher.hash(email: "alice@example.com"))
        XCTAssertNotEqual(hasher.hash(email: "bob@example.com"), hasher.hash(email: "alice@example.com"))
        let other = try EmailHasher(secret: "another-secret-that-is-long-enough!!")
        XCTAssertEqual(other.hash(email: "alice@example.com"), "e1bba18dd7c28d7d9e5790abdf60ffbb66c6bd4bf31155ef6ace840ae67c4e69")
        XCTAssertNoThrow(try PointsValidation.emailHash(hasher.hash(email: "x@y.z")))
    }

    func testHasherRefusesMissingOrShortSecrets() {
        XCTAssertThrowsError(try EmailHasher(secret: "")) { XCTAssertEqual($0 as? EmailHasher.SetupError, .secretMissing) }
        XCTAssertThrowsError(try EmailHasher(secret: "short")) {
            XCTAssertEqual($0 as? EmailHasher.SetupError, .secretTooShort(minimumBytes: 32))
        }
        XCTAssertThrowsError(try EmailHasher.fromEnvironment([:]))
        XCTAssertNoThrow(try EmailHasher.fromEnvironment(["EMAIL_HASH_SECRET": String(repeating: "k", count: 32)]))
    }

    func testMaskerKeepsOnlyTheFirstCharacterAndDomain() {
        XCTAssertEqual(EmailMasker.mask("alice@example.com"), "a***@example.com")
        XCTAssertEqual(EmailMasker.mask(" Bob@Mail.Example.org "), "b***@mail.example.org")
        XCTAssertEqual(EmailMasker.mask("@example.com"), "***@example.com")
        XCTAssertEqual(EmailMasker.mask("no-at-sign"), "***")
        XCTAssertEqual(EmailMasker.mask("王小明@例子.cn"), "王***@例子.cn")
        for email in ["alice@example.com", "@x.y", "nope"] {
            XCTAssertTrue(EmailMasker.looksMasked(EmailMasker.mask(email)))
        }
        XCTAssertFalse(EmailMasker.looksMasked("alice@example.com"))
        XCTAssertFalse(EmailMasker.looksMasked("alice***@example.com"))
    }
}
