import StrictJSON
import XCTest

final class JSONObjectTests: XCTestCase {
    /// Small objects scan their keys, large ones switch to a set: both paths
    /// must refuse a repeat and keep document order.
    func testDuplicatesAreRefusedOnBothSidesOfTheScanLimit() {
        for size in [
            1, StrictJSONLimits.linearKeyScanMembersMax - 1, StrictJSONLimits.linearKeyScanMembersMax,
            StrictJSONLimits.linearKeyScanMembersMax + 1, 200,
        ] {
            var object = JSONObject()
            for number in 0..<size {
                XCTAssertTrue(object.insert("k\(number)", .integer(Int64(number))), "size \(size)")
            }
            for number in [0, size / 2, size - 1] {
                XCTAssertFalse(object.insert("k\(number)", .null), "size \(size) key \(number)")
            }
            XCTAssertEqual(object.count, size)
            XCTAssertEqual(object.keys, (0..<size).map { "k\($0)" })
            XCTAssertEqual(object["k\(size - 1)"], .integer(Int64(size - 1)))
            XCTAssertTrue(object.insert("new", .null))
            XCTAssertFalse(object.insert("new", .bool(true)))
        }
    }

    func testParserRefusesADuplicateInALargeObject() throws {
        let members = (0..<100).map { "\"k\($0)\":\($0)" }
        let good = "{" + members.joined(separator: ",") + "}"
        guard case .object(let object) = try StrictJSONParser().parse(good) else { return XCTFail("not an object") }
        XCTAssertEqual(object.count, 100)
        let bad = "{" + (members + ["\"k42\":0"]).joined(separator: ",") + "}"
        XCTAssertThrowsError(try StrictJSONParser().parse(bad)) {
            XCTAssertEqual(($0 as? JSONParseError)?.kind, .duplicateKey("k42"))
        }
    }

    /// Found with Fuzz/JSONFuzz's key oracle (a key is refused only when a
    /// member has the same scalars): keys compared with String ==, so
    /// canonically equivalent names were duplicates and lookups matched
    /// a name that was not there.
    func testKeysAreTheSameOnlyWhenTheirBytesAre() throws {
        let pairs: [(String, String)] = [
            ("K", "\u{212A}"), ("\u{E9}", "e\u{301}"), ("a\u{301}\u{323}", "a\u{323}\u{301}"),
        ]
        for size in [0, StrictJSONLimits.linearKeyScanMembersMax + 1] {
            for (first, second) in pairs {
                var object = JSONObject()
                for number in 0..<size { object.insert("k\(number)", .null) }
                XCTAssertTrue(object.insert(first, .integer(1)), "size \(size)")
                XCTAssertTrue(
                    object.insert(second, .integer(2)),
                    "size \(size): \(first.unicodeScalars.map(\.value)) and \(second.unicodeScalars.map(\.value))")
                XCTAssertFalse(object.insert(second, .null))
                XCTAssertEqual(object[first], .integer(1))
                XCTAssertEqual(object[second], .integer(2))
            }
        }
        guard case .object(let parsed) = try StrictJSONParser().parse(#"{"K":1,"\u212a":2}"#) else {
            return XCTFail("not an object")
        }
        XCTAssertEqual(parsed.count, 2)
        XCTAssertEqual(parsed["K"], .integer(1))
        XCTAssertNotEqual(JSONObject(["K": .null]), JSONObject(["\u{212A}": .null]))
    }

    func testEqualityFollowsOrder() {
        let ab = JSONObject(["a": .null, "b": .bool(true)])
        let ba = JSONObject(["b": .bool(true), "a": .null])
        XCTAssertNotEqual(ab, ba)
        XCTAssertEqual(ab, JSONObject(["a": .null, "b": .bool(true)]))
        var partial = JSONObject()
        partial.insertIfPresent("a", .null)
        partial.insertIfPresent("x", nil)
        XCTAssertEqual(partial.keys, ["a"])
    }
}
