import Foundation
import UTCTime
import XCTest

final class UTCDateTimeTests: XCTestCase {
    func testKnownInstants() {
        XCTAssertEqual(UTCDateTime(unixMilliseconds: 784_111_777_000).imfFixdate, "Sun, 06 Nov 1994 08:49:37 GMT")
        XCTAssertEqual(UTCDateTime(unixMilliseconds: 0).rfc3339, "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(UTCDateTime(unixMilliseconds: 951_782_400_123).rfc3339, "2000-02-29T00:00:00.123Z")
        XCTAssertEqual(UTCDateTime(unixMilliseconds: 1_777_284_000_000).rfc3339, "2026-04-27T10:00:00.000Z")
        XCTAssertEqual(UTCDateTime(unixMilliseconds: -1).rfc3339, "1969-12-31T23:59:59.999Z")
        XCTAssertEqual(UTCDateTime(unixMilliseconds: 4_102_444_800_000).imfFixdate, "Fri, 01 Jan 2100 00:00:00 GMT")
        XCTAssertEqual(UTCDateTime(unixMilliseconds: 64_092_211_200_000).rfc3339, "4001-01-01T00:00:00.000Z")
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

    /// What is written reads back to the same instant, in both forms.
    func testWrittenTextsReadBack() {
        var instant: Int64 = -62_135_596_800_000  // 0001-01-01
        while instant < 253_402_300_799_000 {  // 9999-12-31T23:59:59
            let time = UTCDateTime(unixMilliseconds: instant)
            XCTAssertEqual(time.unixMilliseconds, instant)
            XCTAssertEqual(UTCDateTime.unixMilliseconds(rfc3339: time.rfc3339), instant, time.rfc3339)
            XCTAssertEqual(
                UTCDateTime.unixMilliseconds(httpDate: time.imfFixdate), instant - Int64(time.millisecond),
                time.imfFixdate)
            instant += 7_654_321_987_123
        }
    }

    func testRFC3339() {
        let cases: [(String, Int64?)] = [
            ("2023-10-19T01:18:54Z", 1_697_678_334_000),
            ("2021-04-16T10:59:33+08:00", 1_618_541_973_000),
            ("2024-02-29T23:59:59.999Z", 1_709_251_199_999),
            ("2023-10-19T01:18:54.5-05:30", 1_697_698_134_500),
            ("1969-12-31t23:59:59z", -1_000),
            ("2023-10-19T01:18:54.123456789Z", 1_697_678_334_123),
            ("2016-12-31T23:59:60Z", 1_483_228_800_000),
            ("2021-04-16T10:59:33+0800", nil),
            ("2023-02-29T00:00:00Z", nil), ("2023-13-01T00:00:00Z", nil), ("2023-10-19T24:00:00Z", nil),
            ("2023-10-19 01:18:54Z", nil), ("2023-10-19T01:18:54", nil), ("2023-10-19T01:18:54.Z", nil),
            ("2023-10-19T01:18:54.1234567890Z", nil), ("2023-10-19T01:18:54+08", nil),
            ("2023-10-19T01:18:54Zjunk", nil),
            ("2023-10-19T01:18:54+24:00", nil), ("2023-10-19", nil), ("1697678334000", nil), ("", nil),
            ("٢٠٢٣-10-19T01:18:54Z", nil),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(UTCDateTime.unixMilliseconds(rfc3339: text), expected, text)
        }
        let lenient = UTCDateTime.RFC3339Leniency(offsetWithoutColon: true)
        XCTAssertEqual(
            UTCDateTime.unixMilliseconds(rfc3339: "2021-04-16T10:59:33+0800", leniency: lenient), 1_618_541_973_000)
        XCTAssertEqual(
            UTCDateTime.unixMilliseconds(rfc3339: "2021-04-16T10:59:33+08:00", leniency: lenient), 1_618_541_973_000)
        XCTAssertNil(UTCDateTime.unixMilliseconds(rfc3339: "2021-04-16T10:59:33+08", leniency: lenient))
    }

    func testFullDate() {
        XCTAssertEqual(UTCDateTime.unixMilliseconds(fullDate: "2026-05-01"), 1_777_593_600_000)
        XCTAssertEqual(UTCDateTime.unixMilliseconds(fullDate: "2000-02-29"), 951_782_400_000)
        for text in ["2026-5-01", "2026-05-01T00:00:00Z", "1900-02-29", "2026-04-31", "2026-05-01 ", ""] {
            XCTAssertNil(UTCDateTime.unixMilliseconds(fullDate: text), text)
        }
    }

    func testHTTPDate() {
        XCTAssertEqual(UTCDateTime.unixMilliseconds(httpDate: "Sun, 06 Nov 1994 08:49:37 GMT"), 784_111_777_000)
        XCTAssertEqual(UTCDateTime.unixMilliseconds(httpDate: "Wed, 21 Oct 2015 07:28:00 GMT"), 1_445_412_480_000)
        for text in [
            "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "sun, 06 nov 1994 08:49:37 gmt",
            "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 GMT ",
            "Sun, 31 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT", "",
        ] {
            XCTAssertNil(UTCDateTime.unixMilliseconds(httpDate: text), text)
        }
    }

    func testNowIsTheWallClock() {
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let now = UTCDateTime.now().unixMilliseconds
        let after = Int64(Date().timeIntervalSince1970 * 1000)
        XCTAssertTrue((before - 1...after + 1).contains(now), "\(before) \(now) \(after)")
    }
}
