import Logging
import PostgresClient
import ServiceKitDatabase
import XCTest

/// A service's pool hands PostgreSQL's notices to its logger: one JSON line
/// each, a WARNING at warning level and the rest at info.
final class ServiceDatabaseNoticeTests: XCTestCase {
    func testNoticesBecomeLogLinesAtTheirLevel() {
        let sink = MemorySink()
        let log = ServiceDatabase.noticeLogger(Logger(service: "points", minimumLevel: .info, sink: sink))
        log(PostgresNotice(severity: "NOTICE", sqlState: "42P07", message: "relation \"x\" already exists, skipping"))
        log(PostgresNotice(severity: "WARNING", sqlState: "01000", message: "careful"))
        let lines = sink.allLines
        XCTAssertEqual(lines.count, 2, "\(lines)")
        guard lines.count == 2 else { return }
        XCTAssertTrue(
            lines[0].contains(#""level":"info""#) && lines[0].contains(#""sqlstate":"42P07""#)
                && lines[0].contains(#""severity":"NOTICE""#) && lines[0].contains("postgres notice"), lines[0])
        XCTAssertTrue(lines[1].contains(#""level":"warning""#) && lines[1].contains(#""detail":"careful""#), lines[1])
        let quiet = MemorySink()
        ServiceDatabase.noticeLogger(Logger(service: "points", minimumLevel: .notice, sink: quiet))(
            PostgresNotice(severity: "NOTICE", sqlState: nil, message: "skipping"))
        XCTAssertEqual(quiet.allLines, [], "a notice is below a production log level")
    }
}
