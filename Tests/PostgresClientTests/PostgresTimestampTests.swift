@testable import PostgresClient
import XCTest

final class PostgresTimestampTests: XCTestCase {
    func testParsesWholeSecondsFractionsAndOffsets() throws {
        XCTAssertEqual(try XCTUnwrap(PostgresTimestamp.parse("1970-01-01 00:00:00+00")).timeIntervalSince1970, 0)
        XCTAssertEqual(
            try XCTUnwrap(PostgresTimestamp.parse("1970-01-01 00:00:01.5+00")).timeIntervalSince1970, 1.5,
            accuracy: 1e-9)
        XCTAssertEqual(
            try XCTUnwrap(PostgresTimestamp.parse("1970-01-01 05:30:00+05:30")).timeIntervalSince1970, 0, accuracy: 1e-9
        )
        XCTAssertEqual(
            try XCTUnwrap(PostgresTimestamp.parse("1970-01-01 00:00:00-01")).timeIntervalSince1970, 3600, accuracy: 1e-9
        )
        XCTAssertEqual(
            try XCTUnwrap(PostgresTimestamp.parse("2000-02-29 12:00:00")).timeIntervalSince1970, 951_825_600,
            accuracy: 1e-9)
    }

    func testRejectsMalformedText() {
        for text in [
            "", "2026-11-29", "2026/11/29 00:00:00+00", "2026-11-29 0a:00:00+00", "2026-11-29 00:00:00 UTC", "infinity",
            "0044-03-15 12:00:00+00 BC", "2026-11-29 00:00:00+00:00:30", "2026-11-29 00:00:00+00x",
            "2026-11-29 00:00:00.5+01:3",
        ] {
            XCTAssertNil(PostgresTimestamp.parse(text), text)
        }
    }
}
