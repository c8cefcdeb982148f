import XCTest
@testable import AppStoreVerification

final class StrictJSONTests: XCTestCase {
    private func parse(_ text: String) throws -> JSONValue { try StrictJSON.parse(Array(text.utf8)) }

    func testParsesValues() throws {
        let value = try parse(#" { "a" : [1, -2.5e3, true, false, null, "x\u00e9\ud83d\ude00\n"], "b": {} } "#)
        XCTAssertEqual(value["a"], .array([.number("1"), .number("-2.5e3"), .bool(true), .bool(false), .null, .string("xé😀\n")]))
        XCTAssertEqual(value["b"], .object([]))
    }

    func testRejectsInvalidTexts() {
        let invalid = [
            "", "{", "{\"a\":1,}", "[1,]", "{\"a\":1}{}", "{'a':1}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}",
            "{\"a\":+1}", "{\"a\":NaN}", "{\"a\":\"\u{01}\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\\ud800\"}",
            "{\"a\":\"\\udc00\"}", "{\"a\":1,\"a\":2}", "// c\n{}", "{\"a\":tru}", "[1 2]", "\"unterminated",
        ]
        for text in invalid {
            XCTAssertThrowsError(try parse(text), "accepted \(text.debugDescription)")
        }
    }

    func testRejectsInvalidUTF8InStrings() {
        XCTAssertThrowsError(try StrictJSON.parse([0x22, 0xFF, 0x22]))
        XCTAssertThrowsError(try StrictJSON.parse([0x22, 0xED, 0xA0, 0x80, 0x22]))  // encoded surrogate
    }

    func testDepthLimit() throws {
        let limit = VerificationLimits.jsonDepthMax
        XCTAssertNoThrow(try parse(String(repeating: "[", count: limit) + String(repeating: "]", count: limit)))
        XCTAssertThrowsError(try parse(String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)))
        XCTAssertThrowsError(try parse(String(repeating: "[", count: 100_000)))
    }

    func testExactIntegers() {
        XCTAssertEqual(PayloadReader.exactInteger("9223372036854775807"), Int64.max)
        XCTAssertNil(PayloadReader.exactInteger("9223372036854775808"))
        XCTAssertEqual(PayloadReader.exactInteger("1698148900000.0"), 1_698_148_900_000)
        XCTAssertEqual(PayloadReader.exactInteger("-0.0"), 0)
        XCTAssertNil(PayloadReader.exactInteger("1.5"))
        XCTAssertNil(PayloadReader.exactInteger("1e300"))
        XCTAssertEqual(PayloadReader.exactInteger("2000000847061981"), 2_000_000_847_061_981)
    }

    func testStrictBase64() {
        XCTAssertEqual(StrictBase64.decodeURL(Array("-_8".utf8)), [0xFB, 0xFF])
        XCTAssertNil(StrictBase64.decodeURL(Array("-_9".utf8)))       // non-zero trailing bits
        XCTAssertNil(StrictBase64.decodeURL(Array("+/8".utf8)))       // standard alphabet
        XCTAssertNil(StrictBase64.decodeURL(Array("AA==".utf8)))      // padding
        XCTAssertNil(StrictBase64.decodeURL(Array("A".utf8)))
        XCTAssertEqual(StrictBase64.decodeStandard(Array("+/8=".utf8)), [0xFB, 0xFF])
        XCTAssertNil(StrictBase64.decodeStandard(Array("+/8".utf8)))  // missing padding
        XCTAssertNil(StrictBase64.decodeStandard(Array("+/8=\n".utf8)))
        XCTAssertNil(StrictBase64.decodeStandard(Array("A===".utf8)))
        for length in 0..<20 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            XCTAssertEqual(StrictBase64.decodeURL(Array(StrictBase64.encodeURL(bytes).utf8)), bytes)
            XCTAssertEqual(StrictBase64.decodeStandard(Array(StrictBase64.encodeStandard(bytes).utf8)), bytes)
        }
    }
}
