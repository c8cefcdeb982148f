import XCTest
import StrictJSON

final class StrictJSONParserTests: XCTestCase {
    private let parser = StrictJSONParser()

    private func kind(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> JSONParseError.Kind? {
        kind(Array(text.utf8), file: file, line: line)
    }

    private func kind(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> JSONParseError.Kind? {
        do {
            _ = try parser.parse(bytes)
            XCTFail("expected a parse error", file: file, line: line)
            return nil
        } catch {
            return error.kind
        }
    }

    func testParsesAllValueKindsPreservingOrder() throws {
        let value = try parser.parse(#" { "b": [1, -0.5e+3, true, false, null], "a": "x\u00e9\ud83d\ude00\n" } "#)
        guard case .object(let object) = value else { return XCTFail("not an object") }
        XCTAssertEqual(object.keys, ["b", "a"])
        XCTAssertEqual(object["a"], .string("xé😀\n"))
        guard case .array(let elements)? = object["b"] else { return XCTFail("not an array") }
        XCTAssertEqual(elements.count, 5)
        guard case .number(let integer) = elements[0], case .number(let decimal) = elements[1] else { return XCTFail() }
        XCTAssertEqual(integer.int64Value, 1)
        XCTAssertNil(decimal.int64Value)
        XCTAssertEqual(decimal.doubleValue, -500)
    }

    func testLargeIntegersKeepTheirText() throws {
        guard case .number(let number) = try parser.parse("2000000847061981123") else { return XCTFail() }
        XCTAssertEqual(number.text, "2000000847061981123")
        XCTAssertEqual(number.int64Value, 2_000_000_847_061_981_123)
        guard case .number(let huge) = try parser.parse("99999999999999999999") else { return XCTFail() }
        XCTAssertNil(huge.int64Value)
    }

    func testDuplicateKeysAreRejectedAfterUnescaping() {
        XCTAssertEqual(kind(#"{"a":1,"a":2}"#), .duplicateKey("a"))
        XCTAssertEqual(kind(#"{"a":1,"\u0061":2}"#), .duplicateKey("a"))
        XCTAssertEqual(kind(#"{"x":{"a":1,"b":{"a":1,"a":1}}}"#), .duplicateKey("a"))
    }

    func testDepthLimit() throws {
        let ok = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        XCTAssertNoThrow(try parser.parse(ok))
        let deep = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        XCTAssertEqual(kind(deep), .depthLimitExceeded)
        XCTAssertEqual(
            kind(String(repeating: #"{"a":"#, count: 40) + "1" + String(repeating: "}", count: 40)), .depthLimitExceeded
        )
    }

    func testSizeLimit() {
        let small = StrictJSONParser(documentBytesMax: 8)
        XCTAssertNoThrow(try small.parse("[1,2,3]"))
        XCTAssertThrowsError(try small.parse("[1,2,3,4]")) {
            XCTAssertEqual(($0 as? JSONParseError)?.kind, .documentTooLarge)
        }
    }

    func testInvalidUTF8() {
        XCTAssertEqual(kind([0x22, 0xC3, 0x22]), .invalidUTF8)  // truncated sequence
        XCTAssertEqual(kind([0x22, 0xC0, 0xAF, 0x22]), .invalidUTF8)  // overlong "/"
        XCTAssertEqual(kind([0x22, 0xE0, 0x80, 0xAF, 0x22]), .invalidUTF8)  // overlong
        XCTAssertEqual(kind([0x22, 0xED, 0xA0, 0x80, 0x22]), .invalidUTF8)  // UTF-8 surrogate
        XCTAssertEqual(kind([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22]), .invalidUTF8)  // > U+10FFFF
        XCTAssertEqual(kind([0x22, 0xFF, 0x22]), .invalidUTF8)
        XCTAssertEqual(kind([0x22, 0x80, 0x22]), .invalidUTF8)  // lone continuation
        XCTAssertEqual(kind([0xEF, 0xBB, 0xBF, 0x7B, 0x7D]), .unexpectedByte(0xEF))  // BOM
    }

    func testEscapes() {
        XCTAssertEqual(kind(#""\x""#), .invalidEscape)
        XCTAssertEqual(kind(#""\u12G4""#), .invalidEscape)
        XCTAssertEqual(kind(#""\ud800""#), .loneSurrogate)
        XCTAssertEqual(kind(#""\udc00""#), .loneSurrogate)
        XCTAssertEqual(kind(#""\ud800\u0041""#), .loneSurrogate)
        XCTAssertEqual(kind("\"a\u{01}b\""), .controlCharacterInString)
        XCTAssertEqual(kind("\"tab\tinside\""), .controlCharacterInString)
    }

    func testNumbersFollowTheGrammar() {
        for bad in ["01", "-", "1.", ".5", "1e", "1e+", "+1", "-01", "0x10", "NaN", "Infinity", "1.e5"] {
            XCTAssertNotNil(kind(bad), bad)
        }
        for good in ["0", "-0", "10", "1.5", "1e5", "1E-5", "-1.25e+10"] {
            XCTAssertNoThrow(try parser.parse(good), good)
        }
    }

    func testStructuralErrors() {
        XCTAssertEqual(kind(""), .unexpectedEnd)
        XCTAssertEqual(kind("{"), .unexpectedEnd)
        XCTAssertEqual(kind(#"{"a":1,}"#), .unexpectedByte(UInt8(ascii: "}")))
        XCTAssertEqual(kind("[1,]"), .unexpectedByte(UInt8(ascii: "]")))
        XCTAssertEqual(kind("{} {}"), .trailingContent)
        XCTAssertEqual(kind("{a:1}"), .unexpectedByte(UInt8(ascii: "a")))
        XCTAssertEqual(kind("[1 2]"), .unexpectedByte(UInt8(ascii: "2")))
        XCTAssertEqual(kind("// c\n{}"), .unexpectedByte(UInt8(ascii: "/")))
        XCTAssertEqual(kind("tru"), .unexpectedEnd)
        XCTAssertEqual(kind("nul1"), .unexpectedByte(UInt8(ascii: "1")))
        XCTAssertEqual(kind("[\u{0C}1]"), .unexpectedByte(0x0C))
    }

    func testErrorOffsetPointsAtTheProblem() {
        XCTAssertThrowsError(try parser.parse(#"{"a":1,"a":2}"#)) {
            XCTAssertEqual(($0 as? JSONParseError)?.byteOffset, 7)
        }
    }

    func testWriterRoundTripsAndEscapes() throws {
        let value = JSONValue.object(
            JSONObject([
                "s": .string("q\"\\/\n\r\t\u{01}\u{7F}é😀"), "n": .integer(-42), "a": .array([.bool(true), .null]),
            ]))
        let text = JSONWriter.string(of: value)
        XCTAssertEqual(text, #"{"s":"q\"\\/\n\r\t\u0001\u007fé😀","n":-42,"a":[true,null]}"#)
        XCTAssertEqual(try parser.parse(text), value)
    }

    // MARK: Cases carried over from the App Store payload parser.

    func testParsesValuesWithSubscripts() throws {
        let value = try parser.parse(#" { "a" : [1, -2.5e3, true, false, null, "x\u00e9\ud83d\ude00\n"], "b": {} } "#)
        let one = try XCTUnwrap(JSONNumber("1"))
        let decimal = try XCTUnwrap(JSONNumber("-2.5e3"))
        XCTAssertEqual(
            value["a"], .array([.number(one), .number(decimal), .bool(true), .bool(false), .null, .string("xé😀\n")]))
        XCTAssertEqual(value["b"], .object(JSONObject()))
        XCTAssertNil(value["c"])
        XCTAssertNil(value["a"]?["x"])
    }

    func testRejectsInvalidTexts() {
        let invalid = [
            "", "{", "{\"a\":1,}", "[1,]", "{\"a\":1}{}", "{'a':1}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}",
            "{\"a\":+1}", "{\"a\":NaN}", "{\"a\":\"\u{01}\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\\ud800\"}",
            "{\"a\":\"\\udc00\"}", "{\"a\":1,\"a\":2}", "// c\n{}", "{\"a\":tru}", "[1 2]", "\"unterminated",
        ]
        for text in invalid {
            XCTAssertThrowsError(try parser.parse(text), "accepted \(text.debugDescription)")
        }
    }

    func testUnboundedNestingFailsOnTheLimitNotTheStack() {
        let roomy = StrictJSONParser(documentBytesMax: 1 << 20)
        XCTAssertThrowsError(try roomy.parse(String(repeating: "[", count: 100_000))) {
            XCTAssertEqual($0 as? JSONParseError, JSONParseError(kind: .depthLimitExceeded, byteOffset: 32))
        }
        let custom = StrictJSONParser(depthMax: 2)
        XCTAssertNoThrow(try custom.parse("[[1]]"))
        XCTAssertThrowsError(try custom.parse("[[[1]]]"))
    }

    // MARK: Strings built from runs between escapes.

    func testStringsMixRunsEscapesAndMultibyteText() throws {
        XCTAssertEqual(try parser.parse(#""""#), .string(""))
        XCTAssertEqual(try parser.parse(#""\n""#), .string("\n"))
        XCTAssertEqual(try parser.parse(#""ab\"cd\\ef\/g""#), .string("ab\"cd\\ef/g"))
        XCTAssertEqual(try parser.parse(#""é\u00e9é😀\tz""#), .string("ééé😀\tz"))
        XCTAssertEqual(try parser.parse(#""\b\f\r""#), .string("\u{08}\u{0C}\r"))
    }

    func testInvalidUTF8OffsetPointsAtTheBadSequence() {
        // "ab" "é" then a truncated sequence at offset 5, then more text.
        let bytes: [UInt8] = [0x22, 0x61, 0x62, 0xC3, 0xA9, 0xE2, 0x82, 0x7A, 0x22]
        XCTAssertThrowsError(try parser.parse(bytes)) {
            XCTAssertEqual($0 as? JSONParseError, JSONParseError(kind: .invalidUTF8, byteOffset: 5))
        }
        // After an escape, the offset is still absolute.
        let escaped: [UInt8] = Array(#""\n"#.utf8) + [0xFF, 0x22]
        XCTAssertThrowsError(try parser.parse(escaped)) {
            XCTAssertEqual($0 as? JSONParseError, JSONParseError(kind: .invalidUTF8, byteOffset: 3))
        }
        // Malformed bytes before a control character are reported first.
        XCTAssertEqual(kind([0x22, 0xFF, 0x01, 0x22]), .invalidUTF8)
        XCTAssertEqual(kind([0x22, 0xC3, 0xA9]), .unexpectedEnd)
    }

    func testErrorDescriptionsNameTheReasonAndOffsetButNotTheContent() {
        XCTAssertEqual(
            JSONParseError(kind: .duplicateKey("secret"), byteOffset: 7).description,
            "duplicate key (6 bytes) at byte 7")
        XCTAssertEqual(
            JSONParseError(kind: .unexpectedByte(0x2F), byteOffset: 0).description, "unexpected byte 0x2f at byte 0")
        XCTAssertEqual(
            JSONParseError(kind: .depthLimitExceeded, byteOffset: 33).description, "nesting too deep at byte 33")
    }

    /// Seeded random byte strings: a value or a typed error, never a crash.
    func testSeededFuzzNeverCrashes() {
        var generator = SeededBytes(seed: 42)
        let alphabet =
            Array(#"{}[],:"\ u0123456789abcdefnrtl.eE+-"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xA9, 0xED, 0xF4, 0xFF]
        var parsedCount = 0
        for _ in 0..<5000 {
            let length = Int(generator.next() % 24)
            let bytes = (0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            if (try? parser.parse(bytes)) != nil { parsedCount += 1 }
        }
        XCTAssertLessThan(parsedCount, 5000)
    }

    /// Strings are stream-safe text (UAX #15): at most 30 combining marks in
    /// a row, raw or escaped, in keys and values. Swift sorts a run of marks
    /// with an insertion sort whenever the string is hashed or compared, so
    /// a long run in descending class order cost quadratic time in a lookup.
    func testALongRunOfCombiningMarksIsRefused() throws {
        let thirty = String(repeating: "\u{0301}", count: 30)
        XCTAssertEqual(try parser.parse(Array("[\"e\(thirty)\"]".utf8)), .array([.string("e" + thirty)]))
        guard case .object(let object) = try parser.parse(Array("{\"\(thirty)x\(thirty)\": 1}".utf8)) else {
            return XCTFail()
        }
        XCTAssertEqual(object.keys, ["\(thirty)x\(thirty)"], "two runs of 30, apart")
        let text = "\"e" + thirty + "\u{0316}" + "\""
        XCTAssertEqual(kind(text), .tooManyCombiningMarks)
        XCTAssertEqual(kind("{" + text + ": 1}"), .tooManyCombiningMarks, "a key")
        XCTAssertEqual(kind("\"e" + String(repeating: "\\u0301", count: 31) + "\""), .tooManyCombiningMarks, "escaped")
        XCTAssertEqual(
            kind("\"" + String(repeating: "\u{0F73}", count: 31) + "\""), .tooManyCombiningMarks,
            "class 0, but it decomposes into marks")
        // The audit's input: 16,000 marks of class 230 then 16,000 of class 220, as a key.
        let attack =
            "{\"a" + String(repeating: "\u{0301}", count: 16_000) + String(repeating: "\u{0316}", count: 16_000)
            + "\":0}"
        XCTAssertEqual(kind(Array(attack.utf8)), .tooManyCombiningMarks)
        do {
            _ = try parser.parse(Array("[\"\(String(repeating: "\u{0301}", count: 31))\"]".utf8))
            XCTFail("expected a parse error")
        } catch {
            XCTAssertEqual(error.byteOffset, 1, "the string's opening quote")
            XCTAssertEqual(error.description, "too many combining marks in a row at byte 1")
        }
    }
}

/// A deterministic 64-bit linear congruential generator (Knuth's MMIX
/// constants), high bits only, for reproducible fuzz inputs.
private struct SeededBytes {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state >> 17
    }
}
