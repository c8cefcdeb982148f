import FieldRules
import XCTest

/// Swift's `==` on strings is canonical equivalence, so these tests compare
/// UTF-8 bytes: that is what the HMAC and the database see.
final class EmailNormalizationTests: XCTestCase {
    private func assertNormalized(
        _ input: String, _ expected: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        let normalized = EmailNormalization.normalized(input)
        XCTAssertEqual(Array(normalized.utf8), Array(expected.utf8), input.debugDescription, file: file, line: line)
    }

    func testTrimsWhitespaceAndNewlinesIncludingUnicodeSpaces() {
        assertNormalized("  alice@example.com \n", "alice@example.com")
        assertNormalized("\t\r\nalice@example.com\u{A0}\u{3000}\u{2028}", "alice@example.com")
        assertNormalized("a b@example.com", "a b@example.com")  // inside is the address's business
    }

    func testLowerCasesASCIIAndNonASCII() {
        assertNormalized("Alice@Example.COM", "alice@example.com")
        assertNormalized("ÉLODIE@EXAMPLE.FR", "élodie@example.fr")
        assertNormalized("ΣΟΦΊΑ@ΠΑΡΆΔΕΙΓΜΑ.GR", "σοφία@παράδειγμα.gr")
        assertNormalized("ÄÖÜ@MÜNCHEN.DE", "äöü@münchen.de")
        assertNormalized("ПОЧТА@ПРИМЕР.РФ", "почта@пример.рф")
        assertNormalized("王@例子.CN", "王@例子.cn")
    }

    /// Unicode's default case mapping, whatever the process locale: the
    /// Turkish dotted capital I becomes "i" + U+0307, never a bare "i".
    func testLowerCasingIsLocaleIndependent() {
        assertNormalized("İ@X.COM", "i\u{307}@x.com")
        assertNormalized("I@X.COM", "i@x.com")
    }

    func testComposedAndDecomposedAreOneIdentity() {
        let composed = "Jos\u{E9}@Caf\u{E9}.example"
        let decomposed = "Jose\u{301}@Cafe\u{301}.example"
        XCTAssertNotEqual(Array(composed.utf8), Array(decomposed.utf8))
        assertNormalized(composed, "jos\u{E9}@caf\u{E9}.example")
        assertNormalized(decomposed, "jos\u{E9}@caf\u{E9}.example")
        // Upper-case decomposed: "E" + U+0301 lower-cases and composes to é.
        assertNormalized("JOSE\u{301}@X", "jos\u{E9}@x")
        // Hangul jamo compose to syllables; canonical order of marks is fixed.
        assertNormalized("\u{1100}\u{1161}@x", "\u{AC00}@x")
        assertNormalized("a\u{323}\u{302}@x", "\u{1EAD}@x")
        assertNormalized("a\u{302}\u{323}@x", "\u{1EAD}@x")
    }

    /// Compatibility characters stay apart (NFC, not NFKC).
    func testCompatibilityCharactersAreNotFolded() {
        assertNormalized("\u{FB01}@x", "\u{FB01}@x")
        assertNormalized("ａ@x", "ａ@x")
    }

    /// Normalising twice changes nothing, for every assigned scalar after an
    /// "E" (so a mark has a base to compose with, and case mapping runs).
    func testIdempotentOverEveryScalar() {
        var failures = 0
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value), scalar.properties.generalCategory != .unassigned else { continue }
            let once = EmailNormalization.normalized("E" + String(scalar))
            let twice = EmailNormalization.normalized(once)
            if Array(once.utf8) != Array(twice.utf8) {
                failures += 1
                if failures < 10 { XCTFail("not idempotent for U+\(String(value, radix: 16))") }
            }
        }
        XCTAssertEqual(failures, 0)
    }
}
