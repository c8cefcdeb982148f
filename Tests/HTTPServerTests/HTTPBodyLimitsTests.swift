import HTTPServer
import UTCTime
import XCTest

/// The body limit by path, read from the target's bytes in place, and the
/// `Date` header's text kept for its second.
final class HTTPBodyLimitsTests: XCTestCase {
    func testAListedPathHasItsOwnLimitWithOrWithoutAQuery() {
        let limits = HTTPBodyLimits(defaultBytesMax: 4, bytesMaxByPath: ["/big": 8, "/bigger": 16])
        XCTAssertEqual(limits.bytesMax(target: "/big"), 8)
        XCTAssertEqual(limits.bytesMax(target: "/big?x=1"), 8)
        XCTAssertEqual(limits.bytesMax(target: Substring("//bigger").dropFirst()), 16)
        for other in ["/bi", "/big/", "/BIG", "/bigg", "big", "", "?/big", "/big#", "/bi\u{00e9}"] {
            XCTAssertEqual(limits.bytesMax(target: other), 4, other)
        }
        XCTAssertEqual(HTTPBodyLimits(defaultBytesMax: 4).bytesMax(target: "/big"), 4)
        XCTAssertEqual(limits, HTTPBodyLimits(defaultBytesMax: 4, bytesMaxByPath: ["/bigger": 16, "/big": 8]))
        XCTAssertNotEqual(limits, HTTPBodyLimits(defaultBytesMax: 4, bytesMaxByPath: ["/big": 8]))
    }

    func testTheDateHeaderIsTheCurrentSecond() {
        for _ in 0..<3 {
            let before = UTCDateTime(unixMilliseconds: HTTPServerClock.unixMilliseconds()).imfFixdate
            let date = HTTPServerClock.imfFixdate()
            let after = UTCDateTime(unixMilliseconds: HTTPServerClock.unixMilliseconds()).imfFixdate
            XCTAssertTrue(date == before || date == after, "\(date) is neither \(before) nor \(after)")
            XCTAssertEqual(date.utf8.count, 29)
        }
    }
}
