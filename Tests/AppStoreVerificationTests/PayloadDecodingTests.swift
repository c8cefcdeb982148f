import CryptoPrimitives
import XCTest
@testable import AppStoreVerification

/// The payload decoding helpers around the JSON parser: exact integers and
/// strict base64 (the JSON cases live in StrictJSONTests).
final class PayloadDecodingTests: XCTestCase {
    func testExactIntegers() {
        XCTAssertEqual(PayloadReader.exactInteger("9223372036854775807"), Int64.max)
        XCTAssertNil(PayloadReader.exactInteger("9223372036854775808"))
        XCTAssertEqual(PayloadReader.exactInteger("1698148900000.0"), 1_698_148_900_000)
        XCTAssertEqual(PayloadReader.exactInteger("-0.0"), 0)
        XCTAssertNil(PayloadReader.exactInteger("1.5"))
        XCTAssertNil(PayloadReader.exactInteger("1e300"))
        XCTAssertEqual(PayloadReader.exactInteger("2000000847061981"), 2_000_000_847_061_981)
        // Decided on the digits, not through a Double.
        XCTAssertNil(PayloadReader.exactInteger("0.99999999999999999999"))
        XCTAssertNil(PayloadReader.exactInteger("9007199254740993.5"))
        XCTAssertEqual(PayloadReader.exactInteger("9007199254740993.0"), 9_007_199_254_740_993)
        XCTAssertEqual(PayloadReader.exactInteger("-9223372036854775808"), Int64.min)
        XCTAssertNil(PayloadReader.exactInteger("-9223372036854775809"))
        XCTAssertEqual(PayloadReader.exactInteger("15e2"), 1500)
        XCTAssertEqual(PayloadReader.exactInteger("1.5E1"), 15)
        XCTAssertEqual(PayloadReader.exactInteger("150e-1"), 15)
        XCTAssertNil(PayloadReader.exactInteger("15e-1"))
        XCTAssertEqual(PayloadReader.exactInteger("0e5"), 0)
        XCTAssertNil(PayloadReader.exactInteger("1e19"))
        XCTAssertEqual(PayloadReader.exactInteger("9.223372036854775807e18"), Int64.max)
        XCTAssertNil(PayloadReader.exactInteger("1e99999"))
        XCTAssertNil(PayloadReader.exactInteger(""))
        XCTAssertNil(PayloadReader.exactInteger("-"))
    }

    func testStrictBase64() {
        XCTAssertEqual(try? StrictBase64.decodeURL(Array("-_8".utf8)), [0xFB, 0xFF])
        XCTAssertNil(try? StrictBase64.decodeURL(Array("-_9".utf8)))  // non-zero trailing bits
        XCTAssertNil(try? StrictBase64.decodeURL(Array("+/8".utf8)))  // standard alphabet
        XCTAssertNil(try? StrictBase64.decodeURL(Array("AA==".utf8)))  // padding
        XCTAssertNil(try? StrictBase64.decodeURL(Array("A".utf8)))
        XCTAssertEqual(try? StrictBase64.decodeStandard(Array("+/8=".utf8)), [0xFB, 0xFF])
        XCTAssertNil(try? StrictBase64.decodeStandard(Array("+/8".utf8)))  // missing padding
        XCTAssertNil(try? StrictBase64.decodeStandard(Array("+/8=\n".utf8)))
        XCTAssertNil(try? StrictBase64.decodeStandard(Array("A===".utf8)))
        for length in 0..<20 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            XCTAssertEqual(try? StrictBase64.decodeURL(Array(StrictBase64.encodeURL(bytes).utf8)), bytes)
            XCTAssertEqual(try? StrictBase64.decodeStandard(Array(StrictBase64.encodeStandard(bytes).utf8)), bytes)
        }
    }
}
