import HTTPServer
import XCTest

/// Header lookups compare names ASCII-case-insensitively without building strings.
final class HTTPHeadersLookupTests: XCTestCase {
    func testNamesMatchIgnoringASCIICaseOnly() {
        XCTAssertTrue("Content-Type".equalsIgnoringASCIICase("content-type"))
        XCTAssertTrue("AUTHORIZATION".equalsIgnoringASCIICase("authorization"))
        XCTAssertTrue("".equalsIgnoringASCIICase(""))
        XCTAssertFalse("authorization".equalsIgnoringASCIICase("authorizatio"))
        XCTAssertFalse("a".equalsIgnoringASCIICase("ab"))
        // Pairs whose bytes differ only in bit 0x20 but are not letters.
        XCTAssertFalse("@".equalsIgnoringASCIICase("`"))
        XCTAssertFalse("[".equalsIgnoringASCIICase("{"))
        XCTAssertFalse("x-1".equalsIgnoringASCIICase("x-\u{11}"))
        // Only ASCII letters fold: É and é stay different.
        XCTAssertFalse("\u{C9}".equalsIgnoringASCIICase("\u{E9}"))
    }

    func testValuesKeepOrderAcrossCases() {
        var headers = HTTPHeaders(["Accept": "a", "X-Other": "b", "accept": "c"])
        XCTAssertEqual(headers.values("ACCEPT"), ["a", "c"])
        headers.remove(name: "aCCept")
        XCTAssertEqual(headers.fields.map(\.name), ["X-Other"])
    }
}
