@testable import FieldRules
import XCTest

/// The ASCII byte path of `EmailNormalization` must give exactly what the
/// Unicode path gives (the stored hashes of identities depend on it).
final class EmailNormalizationASCIIPathTests: XCTestCase {
    func testEveryASCIICharacterAloneAndAroundAnAddress() {
        for byte in UInt8(0)...UInt8(0x7F) {
            let character = String(decoding: [byte], as: UTF8.self)
            for input in [
                character, character + "Ab@Ex.COM" + character, "x" + character + "Y@z", character + character,
            ] {
                assertSamePaths(input)
            }
        }
    }

    func testGeneratedASCIIAddresses() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [UInt8] = Array(0...0x7F)
        for _ in 0..<5_000 {
            let length = Int.random(in: 0...24, using: &generator)
            let bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
            assertSamePaths(String(decoding: bytes, as: UTF8.self))
        }
    }

    func testNonASCIITakesTheUnicodePath() {
        XCTAssertNil(EmailNormalization.asciiNormalized("élodie@example.fr"))
        XCTAssertNil(EmailNormalization.asciiNormalized("alice@example.com\u{A0}"))
        XCTAssertEqual(EmailNormalization.normalized(" ALICE@example.com\u{A0}"), "alice@example.com")
    }

    private func assertSamePaths(_ input: String, file: StaticString = #filePath, line: UInt = #line) {
        guard let fast = EmailNormalization.asciiNormalized(input) else {
            return XCTFail("\(input.debugDescription) is ASCII but took no ASCII path", file: file, line: line)
        }
        XCTAssertEqual(
            Array(fast.utf8), Array(EmailNormalization.unicodeNormalized(input).utf8), input.debugDescription,
            file: file, line: line)
    }
}
