import FieldRules
import XCTest

final class UUIDRuleTests: XCTestCase {
    func testAcceptsEitherCaseAndReturnsLowerCase() throws {
        XCTAssertEqual(
            try UUIDRule.canonical("7C4C7A82-2F6F-4E70-B57A-8B0A7F2E9B72"), "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72")
        XCTAssertEqual(
            try UUIDRule.canonical("7c4c7a82-2F6f-4e70-b57a-8b0a7f2e9b72"), "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72")
        XCTAssertEqual(
            try UUIDRule.canonical("00000000-0000-0000-0000-000000000000"), "00000000-0000-0000-0000-000000000000")
        let id = UUID()
        XCTAssertEqual(try UUIDRule.uuid(id.uuidString), id)
        XCTAssertEqual(try UUIDRule.canonical(id.uuidString), id.uuidString.lowercased())
    }

    func testEmptyIsMissing() {
        assertRefused("", field: "user_id", code: .missing) { try UUIDRule.canonical($0) }
        assertRefused("", field: "appAccountToken", code: .missing) { try UUIDRule.uuid($0, field: "appAccountToken") }
    }

    func testOtherSpellingsAreRefused() {
        let valid = "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72"
        var bad = [
            "7c4c7a822f6f4e70b57a8b0a7f2e9b72", "{\(valid)}", "urn:uuid:\(valid)", " \(valid)", "\(valid) ",
            "\(valid)\n",
            String(valid.dropLast()), valid + "0", "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b7g",
            "7c4c7a82+2f6f-4e70-b57a-8b0a7f2e9b72",
            "7c4c7a8-22f6f-4e70-b57a-8b0a7f2e9b72", "not-a-uuid", String(repeating: "a", count: 1000),
        ]
        for insertion in hostileInsertions {
            // Same byte length where possible, so only the character is at fault.
            bad.append(String(valid.dropLast(insertion.utf8.count)) + insertion)
        }
        for text in bad {
            assertRefused(text, field: "user_id", code: .invalidFormat) { try UUIDRule.canonical($0) }
        }
    }

    /// `uuid` reads the text once (UUIDText) and falls back to `canonical`
    /// only for the error: over random edits of a valid UUID both accept
    /// the same texts, agree on the value and refuse with the same error.
    func testUUIDAgreesWithCanonicalOnRandomEdits() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789abcdefABCDEFgG-{} \u{00e9}".unicodeScalars)
        for _ in 0..<5_000 {
            var scalars = Array(UUID().uuidString.unicodeScalars)
            for _ in 0..<Int.random(in: 0...2, using: &generator) where !scalars.isEmpty {
                let index = Int.random(in: 0..<scalars.count, using: &generator)
                switch Int.random(in: 0...3, using: &generator) {
                case 0: scalars[index] = alphabet.randomElement(using: &generator)!
                case 1: scalars.remove(at: index)
                case 2: scalars.insert(alphabet.randomElement(using: &generator)!, at: index)
                default: scalars = Array(scalars.prefix(index))
                }
            }
            var text = ""
            text.unicodeScalars.append(contentsOf: scalars)
            let canonical = Result { () throws(FieldRuleError) in try UUIDRule.canonical(text, field: "f") }
            let parsed = Result { () throws(FieldRuleError) in try UUIDRule.uuid(text, field: "f") }
            switch (canonical, parsed) {
            case (.success(let lowered), .success(let uuid)):
                XCTAssertEqual(UUID(uuidString: lowered), uuid, text)
            case (.failure(let expected), .failure(let actual)):
                XCTAssertEqual(expected, actual, text)
            default:
                XCTFail("canonical and uuid disagree on \(text.debugDescription)")
            }
        }
    }
}
