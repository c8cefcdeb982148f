import FieldRules
import XCTest

final class UUIDRuleTests: XCTestCase {
    func testAcceptsEitherCaseAndReturnsLowerCase() throws {
        XCTAssertEqual(try UUIDRule.canonical("7C4C7A82-2F6F-4E70-B57A-8B0A7F2E9B72"), "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72")
        XCTAssertEqual(try UUIDRule.canonical("7c4c7a82-2F6f-4e70-b57a-8b0a7f2e9b72"), "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72")
        XCTAssertEqual(try UUIDRule.canonical("00000000-0000-0000-0000-000000000000"), "00000000-0000-0000-0000-000000000000")
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
            "7c4c7a822f6f4e70b57a8b0a7f2e9b72", "{\(valid)}", "urn:uuid:\(valid)", " \(valid)", "\(valid) ", "\(valid)\n",
            String(valid.dropLast()), valid + "0", "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b7g", "7c4c7a82+2f6f-4e70-b57a-8b0a7f2e9b72",
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
}
