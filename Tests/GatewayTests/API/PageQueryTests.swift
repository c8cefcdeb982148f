import XCTest
@testable import Gateway

/// The history routes' paging query, without I/O.
final class PageQueryTests: XCTestCase {
    func testAbsentOrEmptyQueryAsksForTheDefaultPage() throws {
        XCTAssertEqual(try PageQuery.parse(nil, sizeMax: 200), PageQuery())
        XCTAssertEqual(try PageQuery.parse("", sizeMax: 200), PageQuery())
    }

    func testSizeAndTokenAreRead() throws {
        XCTAssertEqual(
            try PageQuery.parse("pageSize=20&pageToken=djE6MTIz", sizeMax: 200),
            PageQuery(pageSize: 20, pageToken: "djE6MTIz"))
        XCTAssertEqual(try PageQuery.parse("pageToken=a-b_c", sizeMax: 100), PageQuery(pageSize: 0, pageToken: "a-b_c"))
        XCTAssertEqual(try PageQuery.parse("pageSize=100", sizeMax: 100), PageQuery(pageSize: 100))
    }

    func testBadInputNamesTheField() {
        let cases: [(Substring, String?, Int32)] = [
            ("pageSize=0", "pageSize", 200), ("pageSize=201", "pageSize", 200), ("pageSize=101", "pageSize", 100),
            ("pageSize=-1", "pageSize", 200), ("pageSize=abc", "pageSize", 200), ("pageSize=", "pageSize", 200),
            ("pageToken=a%2Fb", "pageToken", 200),
            ("pageToken=" + String(repeating: "a", count: 129), "pageToken", 200),
            ("sort=asc", "sort", 200), ("pageSize=1&pageSize=2", "pageSize", 200), ("&", "", 200),
            ("pageSize=+5", "pageSize", 200), ("pageSize=05", "pageSize", 200),
            ("pageSize=0000000000005", "pageSize", 200),
        ]
        for (query, field, sizeMax) in cases {
            XCTAssertThrowsError(try PageQuery.parse(query, sizeMax: sizeMax), String(query)) { error in
                XCTAssertEqual((error as? ValidationError)?.field, field, String(query))
            }
        }
    }
}
