import FieldRules
import XCTest

final class EmailMaskTests: XCTestCase {
    private func assertMask(_ email: String, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
        let mask = EmailMask.masked(email)
        XCTAssertEqual(Array(mask.utf8), Array(expected.utf8), email.debugDescription, file: file, line: line)
        XCTAssertTrue(EmailMask.isValid(mask), mask.debugDescription, file: file, line: line)
    }

    func testOrdinaryAddresses() {
        assertMask("Alice@Example.com", "a***@example.com")
        assertMask("  bob.smith+iap@mail.example.org\n", "b***@mail.example.org")
        assertMask("王小明@例子.cn", "王***@例子.cn")
        assertMask("Élodie@Exemple.fr", "é***@exemple.fr")
        assertMask("E\u{301}lodie@exe\u{301}mple.fr", "\u{E9}***@ex\u{E9}mple.fr")
        assertMask("\"a@b\"@example.com", "\"***@example.com")  // the last "@" separates the domain
    }

    func testNoUsableShapeIsThePlaceholder() {
        for email in ["", "   ", "nobody", "@example.com", "x@", "x@\u{202E}", "x@\u{200B}\u{2066}\u{0}", "@", "@@"] {
            assertMask(email, "***")
        }
    }

    func testUnsafeCharactersAreDropped() {
        assertMask("a@exa\u{202E}mple.com", "a***@example.com")
        assertMask("a@\u{2066}example\u{2069}.com", "a***@example.com")
        assertMask("a@exam\u{200E}ple\u{200F}.com", "a***@example.com")
        assertMask("a@ex\u{200B}am\u{200D}ple\u{FEFF}.com", "a***@example.com")
        assertMask("a@ex\u{0}am\u{7}ple\u{85}.com\u{1B}", "a***@example.com")
        assertMask("a@ex am\u{2028}ple\u{2029}.com", "a***@example.com")
        assertMask("a@example.com\u{E000}\u{E0041}", "a***@example.com")
        // The hint is the first safe character that is not a lone mark.
        assertMask("\u{202E}\u{301}zed@example.com", "z***@example.com")
        assertMask("\u{202E}\u{200B}@example.com", "***@example.com")
        assertMask("***@example.com", "***@example.com")
        // Dropping a control between "e" and U+0301 leaves them adjacent: composed.
        assertMask("a@caf\u{65}\u{7}\u{301}.fr", "a***@caf\u{E9}.fr")
    }

    func testEmojiSurvivesExceptItsJoiners() {
        assertMask("😀x@😀.example", "😀***@😀.example")
        assertMask("a@👩\u{200D}💻.example", "a***@👩💻.example")
        assertMask("a@❤\u{FE0F}.example", "a***@❤\u{FE0F}.example")
    }

    func testLongDomainsAreCutAtThreeHundredTwentyBytes() {
        let ascii = EmailMask.masked("a@" + String(repeating: "d", count: 1000))
        XCTAssertEqual(ascii.utf8.count, 320)
        XCTAssertTrue(EmailMask.isValid(ascii))
        let wide = EmailMask.masked("王@" + String(repeating: "😀", count: 400))
        XCTAssertLessThanOrEqual(wide.utf8.count, 320)
        XCTAssertGreaterThan(wide.utf8.count, 315)
        XCTAssertTrue(EmailMask.isValid(wide))
        assertMask("a@" + String(repeating: "d", count: 315), "a***@" + String(repeating: "d", count: 315))
        assertMask("a@" + String(repeating: "d", count: 316), "a***@" + String(repeating: "d", count: 315))
    }

    func testTheCheckAcceptsMasksOnly() {
        for mask in [
            "a***@example.com", "***@example.com", "***", "王***@例子.cn", "A***@Example.com", "😀***@x", "a***@*",
        ] {
            XCTAssertTrue(EmailMask.isValid(mask), mask)
            XCTAssertEqual(try EmailMask.validated(mask), mask)
        }
        let bad = [
            "alice@example.com", "alice***@example.com", "a**@example.com", "a***@", "a***", "****", "**", "@",
            "a***@exa\u{202E}mple.com", "a***@example.com\u{2066}", "\u{200E}***@example.com", "a***@ex ample.com",
            "a***@example.com\n", "a***@example.com\u{0}", "\u{0}", "a***@x@y", "@***@x", "****@x", "\u{301}***@x",
            "a***@\u{2028}", "***\u{301}", " ***", "*** ", "a***@\u{E000}",
        ]
        for mask in bad {
            XCTAssertFalse(EmailMask.isValid(mask), mask.debugDescription)
            assertRefused(mask, field: "email_masked", code: .invalidFormat) { try EmailMask.validated($0) }
        }
        assertRefused("", field: "email_masked", code: .missing) { try EmailMask.validated($0) }
        let long = "a***@" + String(repeating: "d", count: 316)
        XCTAssertFalse(EmailMask.isValid(long))
        assertRefused(long, field: "email_masked", code: .tooLong) { try EmailMask.validated($0) }
        XCTAssertTrue(EmailMask.isValid(String(long.dropLast())))
    }

    func testRepairedKeepsValidMasksAndEmptyAndMasksTheRest() {
        XCTAssertEqual(EmailMask.repaired(""), "")
        XCTAssertEqual(EmailMask.repaired("A***@Example.com"), "A***@Example.com")
        XCTAssertEqual(EmailMask.repaired("a***@exa\u{202E}mple.com"), "a***@example.com")
        XCTAssertEqual(EmailMask.repaired("a***@ex\u{200B}ample.com"), "a***@example.com")
        XCTAssertEqual(EmailMask.repaired("alice@example.com"), "a***@example.com")
        XCTAssertEqual(EmailMask.repaired("\u{202E}"), "***")
    }
}
