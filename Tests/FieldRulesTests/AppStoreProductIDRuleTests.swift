import FieldRules
import XCTest

final class AppStoreProductIDRuleTests: XCTestCase {
    func testServiceRuleIsPrintableASCIIWithoutSpaces() throws {
        for valid in ["a", "com.meeyao.qianwen.starter_pack", "com.x/y", "!~", String(repeating: "p", count: 255)] {
            XCTAssertEqual(try AppStoreProductIDRule.validated(valid), valid)
        }
        assertRefused("", field: "app_store_product_id", code: .missing) { try AppStoreProductIDRule.validated($0) }
        assertRefused(String(repeating: "p", count: 256), field: "app_store_product_id", code: .tooLong) {
            try AppStoreProductIDRule.validated($0)
        }
        for insertion in hostileInsertions {
            assertRefused("com.x" + insertion, field: "app_store_product_id", code: .invalidFormat) {
                try AppStoreProductIDRule.validated($0)
            }
        }
    }

    func testPublicRuleIsTheAppStoreConnectAlphabet() throws {
        for valid in ["a", "com.meeyao.qianwen.starter_pack", "Com.X-Y_9", String(repeating: "p", count: 255)] {
            XCTAssertEqual(try AppStoreProductIDRule.validatedPublic(valid), valid)
        }
        assertRefused("", field: "appStoreProductId", code: .missing) { try AppStoreProductIDRule.validatedPublic($0) }
        assertRefused(String(repeating: "p", count: 256), field: "appStoreProductId", code: .tooLong) {
            try AppStoreProductIDRule.validatedPublic($0)
        }
        for bad in ["com.x/y", "com.x+y", "com:x", "~"] + hostileInsertions.map({ "com.x" + $0 }) {
            assertRefused(bad, field: "appStoreProductId", code: .invalidFormat) {
                try AppStoreProductIDRule.validatedPublic($0)
            }
        }
    }

    /// What the gateway lets through, the services must accept: every ASCII
    /// byte the public rule accepts, the service rule accepts too.
    func testPublicRuleIsASubsetOfTheServiceRule() {
        for byte in UInt8(0)...0x7F {
            let text = String(decoding: [byte], as: UTF8.self)
            if (try? AppStoreProductIDRule.validatedPublic(text)) != nil {
                XCTAssertNoThrow(try AppStoreProductIDRule.validated(text), "byte \(byte)")
            }
        }
    }
}
