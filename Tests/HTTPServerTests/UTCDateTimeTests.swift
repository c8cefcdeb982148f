import XCTest
@testable import HTTPServer

final class UTCDateTimeTests: XCTestCase {
    func testKnownInstants() {
        XCTAssertEqual(UTCDateTime(unixMilliseconds: 784_111_777_000).imfFixdate, "Sun, 06 Nov 1994 08:49:37 GMT")
        XCTAssertEqual(UTCDateTime(unixMilliseconds: 0).rfc3339, "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(UTCDateTime(unixMilliseconds: 951_782_400_123).rfc3339, "2000-02-29T00:00:00.123Z")
        XCTAssertEqual(UTCDateTime(unixMilliseconds: 1_777_284_000_000).rfc3339, "2026-04-27T10:00:00.000Z")
        XCTAssertEqual(UTCDateTime(unixMilliseconds: -1).rfc3339, "1969-12-31T23:59:59.999Z")
        XCTAssertEqual(UTCDateTime(unixMilliseconds: 4_102_444_800_000).imfFixdate, "Fri, 01 Jan 2100 00:00:00 GMT")
    }

    func testDaysRoundTripAcrossCenturies() {
        var previous = UTCDateTime(unixMilliseconds: -86_400_000 * 200_000)
        for day in -199_999..<200_000 where day % 37 == 0 {
            let current = UTCDateTime(unixMilliseconds: Int64(day) * 86_400_000)
            XCTAssertTrue((1...12).contains(current.month) && (1...31).contains(current.day))
            XCTAssertTrue((current.year, current.month, current.day) > (previous.year, previous.month, previous.day))
            previous = current
        }
    }
}
