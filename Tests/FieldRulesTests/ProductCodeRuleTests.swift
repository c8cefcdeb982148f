import FieldRules
import XCTest

final class ProductCodeRuleTests: XCTestCase {
    func testLowerCaseDigitsAndUnderscore() throws {
        for valid in ["a", "_", "0", "starter_pack", "credits_500", String(repeating: "z", count: 64)] {
            XCTAssertEqual(try ProductCodeRule.validated(valid), valid)
        }
    }

    func testRefusals() {
        assertRefused("", field: "product_code", code: .missing) { try ProductCodeRule.validated($0) }
        assertRefused(String(repeating: "a", count: 65), field: "product_code", code: .tooLong) {
            try ProductCodeRule.validated($0)
        }
        for bad in ["Starter", "starter-pack", "starter.pack", "STARTER_PACK", "starter pack", "ſtarter"] {
            assertRefused(bad, field: "productCode", code: .invalidFormat) {
                try ProductCodeRule.validated($0, field: "productCode")
            }
        }
        for insertion in hostileInsertions {
            assertRefused("pack" + insertion, field: "product_code", code: .invalidFormat) {
                try ProductCodeRule.validated($0)
            }
        }
    }
}
