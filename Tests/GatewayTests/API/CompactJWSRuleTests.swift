import XCTest
@testable import Gateway

/// The shape check a signed transaction passes before it is forwarded:
/// exactly three non-empty base64url segments.
final class CompactJWSRuleTests: XCTestCase {
    func testThreeNonEmptyBase64URLSegmentsPass() throws {
        XCTAssertEqual(try RequestFieldRules.compactJWS("eyJh.Zm9v-_.c2ln", field: "f"), "eyJh.Zm9v-_.c2ln")
        XCTAssertEqual(try RequestFieldRules.compactJWS("a.b.c", field: "f"), "a.b.c")
    }

    func testEveryOtherShapeIsRefused() {
        for bad in [
            "", "a", "a.b", "a.b.c.d", ".b.c", "a..c", "a.b.", "..", "a.b+c.d", "a.b/.c", "a.b.c=", "a b.c.d",
            "a.b.c\n", "ä.b.c",
        ] {
            XCTAssertThrowsError(
                try RequestFieldRules.compactJWS(bad, field: "signedTransactionInfo"), "\(bad.debugDescription)"
            ) { error in
                guard case .invalidFormat? = (error as? ValidationError)?.reason else {
                    return XCTFail("\(bad.debugDescription): \(error)")
                }
            }
        }
    }
}
