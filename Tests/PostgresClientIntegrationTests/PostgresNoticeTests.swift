import Foundation
import Synchronization
@testable import PostgresClient
import XCTest

/// The server's warnings (and notices, where a session asks for them) reach
/// the configured handler, with their severity, SQLSTATE and message;
/// without a handler they had gone to stderr as bare text lines, in the
/// middle of a service's JSON log.
final class PostgresNoticeTests: XCTestCase {
    func testNoticesAndWarningsReachTheHandler() async throws {
        let received = Mutex<[PostgresNotice]>([])
        let pool = PostgresPool(
            configuration: .init(
                connectionString: try TestDatabase.url(), connectionsMax: 2,
                noticeHandler: { notice in received.withLock { $0.append(notice) } }))
        try await pool.withConnection { connection in
            // The pool's sessions send warnings and above (client_min_messages):
            // this notice never leaves the server.
            try await connection.execute("do $$ begin raise notice 'not sent'; raise warning 'careful now'; end $$")
            // A session that asks for notices gets them too, the server's own included.
            try await connection.execute("set client_min_messages to notice")
            try await connection.execute("do $$ begin raise notice 'first % notice', 1; end $$")
            try await connection.execute("drop table if exists pg_temp.no_such_table_here")
            try await connection.execute("reset client_min_messages")
        }
        await pool.close()
        let notices = received.withLock { $0 }
        XCTAssertEqual(notices.count, 3, "\(notices)")
        guard notices.count == 3 else { return }
        XCTAssertEqual(notices[0], PostgresNotice(severity: "WARNING", sqlState: "01000", message: "careful now"))
        XCTAssertTrue(notices[0].isWarning)
        XCTAssertEqual(notices[1], PostgresNotice(severity: "NOTICE", sqlState: "00000", message: "first 1 notice"))
        XCTAssertFalse(notices[1].isWarning)
        XCTAssertEqual(notices[2].severity, "NOTICE")
        XCTAssertEqual(notices[2].sqlState, "00000")
        XCTAssertTrue(notices[2].message.contains("does not exist, skipping"), notices[2].message)
    }

    func testAPoolWithoutAHandlerStillRunsStatementsThatRaiseNotices() async throws {
        let pool = PostgresPool(configuration: .init(connectionString: try TestDatabase.url(), connectionsMax: 1))
        let value = try await pool.withConnection { connection in
            try await connection.execute("do $$ begin raise notice 'to stderr'; end $$")
            return try await connection.query("select 7::bigint as seven", []).first!.int64("seven")
        }
        XCTAssertEqual(value, 7)
        await pool.close()
    }
}
