import FieldRules
@testable import PointsService
import XCTest

/// PointsService stores only masked emails (the gateway masks and hashes),
/// checked with the one mask check of FieldRules.
final class EmailMaskedValidationTests: XCTestCase {
    func testOnlyMaskedFormsPass() throws {
        for masked in ["a***@example.com", "***@example.com", "***", "王***@例子.cn", ""] {
            XCTAssertEqual(try PointsValidation.emailMasked(masked), masked)
        }
        let unmasked = [
            "alice@example.com", "alice***@example.com", "a**@example.com", "a***@exa\u{202E}mple.com",
            "a***@example.com\u{0}",
            "a***@" + String(repeating: "d", count: 316),
        ]
        for text in unmasked {
            XCTAssertThrowsError(try PointsValidation.emailMasked(text), text.debugDescription) { error in
                guard case .validationFailed(let field, _)? = error as? PointsError else { return XCTFail("\(error)") }
                XCTAssertEqual(field, "email_masked")
            }
        }
    }

    /// Whatever address the gateway masks, PointsService accepts the mask.
    func testEveryGatewayMaskPasses() throws {
        for email in [
            "Zoë@exa\u{202E}mple.com", "a@\u{2066}x\u{2069}.cn", "\u{200E}@x", "nobody",
            "a@" + String(repeating: "😀", count: 200),
        ] {
            XCTAssertNoThrow(try PointsValidation.emailMasked(EmailMask.masked(email)), email.debugDescription)
        }
    }
}
