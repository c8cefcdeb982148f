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
}
