@testable import PointsService
import XCTest

/// PointsService stores only masked emails (the gateway masks and hashes).
final class EmailIdentityTests: XCTestCase {
    func testOnlyMaskedFormsPass() {
        for masked in ["a***@example.com", "***@example.com", "***", "王***@例子.cn"] {
            XCTAssertTrue(EmailMasker.looksMasked(masked), masked)
        }
        for unmasked in ["alice@example.com", "alice***@example.com", "", "a**@example.com"] {
            XCTAssertFalse(EmailMasker.looksMasked(unmasked), unmasked)
        }
    }
}
