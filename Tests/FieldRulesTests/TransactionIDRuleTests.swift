import FieldRules
import XCTest

final class TransactionIDRuleTests: XCTestCase {
    func testOneToThirtyTwoDigits() throws {
        for valid in ["0", "1", "2000000847061981", "0001", String(repeating: "9", count: 32)] {
            XCTAssertEqual(try TransactionIDRule.validated(valid), valid)
        }
    }

    func testRefusals() {
        assertRefused("", field: "transaction_id", code: .missing) { try TransactionIDRule.validated($0) }
        assertRefused(String(repeating: "1", count: 33), field: "transaction_id", code: .tooLong) {
            try TransactionIDRule.validated($0)
        }
        assertRefused(String(repeating: "1", count: 10_000), field: "transactionId", code: .tooLong) {
            try TransactionIDRule.validated($0, field: "transactionId")
        }
        for bad in ["-1", "+1", "1.0", "1e3", "12a", "0x1", "١٢٣", "１２"] {
            assertRefused(bad, field: "transaction_id", code: .invalidFormat) { try TransactionIDRule.validated($0) }
        }
        for insertion in hostileInsertions {
            assertRefused("123" + insertion + "4", field: "transaction_id", code: .invalidFormat) {
                try TransactionIDRule.validated($0)
            }
        }
    }

    func testTooLongIsReportedBeforeFormat() {
        assertRefused(String(repeating: "x", count: 33), field: "transaction_id", code: .tooLong) {
            try TransactionIDRule.validated($0)
        }
    }
}
