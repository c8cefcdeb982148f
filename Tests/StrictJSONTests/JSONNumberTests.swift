import StrictJSON
import XCTest

final class JSONNumberTests: XCTestCase {
    func testTextInitializerAcceptsOnlyTheGrammar() {
        for good in ["0", "-0", "42", "-1.25e+10", "1E-5", "99999999999999999999"] {
            XCTAssertEqual(JSONNumber(good)?.text, good, good)
        }
        for bad in ["", " 1", "1 ", "+1", "01", "1.", ".5", "0x1", "NaN", "\"1\"", "[1]", "true"] {
            XCTAssertNil(JSONNumber(bad), bad)
        }
    }

    func testAccessors() throws {
        XCTAssertEqual(JSONNumber(integer: Int64.min).int64Value, Int64.min)
        XCTAssertEqual(try XCTUnwrap(JSONNumber("9223372036854775807")).int64Value, Int64.max)
        XCTAssertNil(try XCTUnwrap(JSONNumber("9223372036854775808")).int64Value)
        XCTAssertNil(try XCTUnwrap(JSONNumber("1.0")).int64Value)
        XCTAssertNil(try XCTUnwrap(JSONNumber("1e2")).int64Value)
        XCTAssertEqual(try XCTUnwrap(JSONNumber("1e2")).doubleValue, 100)
        XCTAssertEqual(JSONValue.integer(7), .number(JSONNumber(integer: 7)))
    }

    /// Digits once written out with no exponent, as PostgreSQL's numeric
    /// prints a jsonb number: 1.5e-3 is 0.0015, 1.50e1 is 15.0, 100e-2 is 1.00.
    func testPlainDigitCountIsTheWrittenOutForm() throws {
        let cases: [(String, Int)] = [
            ("0", 1), ("-0", 1), ("42", 2), ("-42.50", 4), ("0.001", 4), ("1.5e-3", 5), ("1.50e1", 3),
            ("100e-2", 3), ("1E+2", 3), ("1e0", 1), ("9223372036854775807", 19), ("1e131071", 131_072),
            ("1e-16384", 16_385), ("12.5e-1", 3),
        ]
        for (text, digits) in cases {
            XCTAssertEqual(try XCTUnwrap(JSONNumber(text)).plainDigitCount, digits, text)
        }
        for huge in ["1e999999999999999999999", "1e-999999999999", "1e1000000"] {
            XCTAssertEqual(try XCTUnwrap(JSONNumber(huge)).plainDigitCount, JSONNumber.plainDigitCountCeiling, huge)
        }
    }
}
