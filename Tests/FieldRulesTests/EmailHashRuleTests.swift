import FieldRules
import XCTest

final class EmailHashRuleTests: XCTestCase {
    func testSixtyFourLowerHexDigits() throws {
        let valid = "841240d2a5b6654b3ae21fc4499db7b7867077cdd67c3e16cef1f9843e27d1fa"
        XCTAssertEqual(try EmailHashRule.validated(valid), valid)
        XCTAssertNoThrow(try EmailHashRule.validated(String(repeating: "0", count: 64)))
    }

    func testRefusals() {
        assertRefused("", field: "email_hash", code: .missing) { try EmailHashRule.validated($0) }
        for bad in [
            String(repeating: "a", count: 63), String(repeating: "a", count: 65), String(repeating: "AB", count: 32),
            String(repeating: "g", count: 64), String(repeating: "a", count: 62) + "é",
        ] {
            assertRefused(bad, field: "email_hash", code: .invalidFormat) { try EmailHashRule.validated($0) }
        }
        for insertion in hostileInsertions {
            let text = String(repeating: "a", count: 64 - insertion.utf8.count) + insertion
            assertRefused(text, field: "email_hash", code: .invalidFormat) { try EmailHashRule.validated($0) }
        }
    }
}
