@testable import PostgresClient
import XCTest

final class ConnectionLifetimeTests: XCTestCase {
    /// Every connection's libpq handle is freed (PQfinish) once the pool is closed and dropped.
    func testClosedPoolLeavesNoLibPQHandles() async throws {
        let before = LibPQConnection.liveHandleCount
        do {
            let pool = try await TestDatabase.pool(connectionsMax: 4)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await pool.withConnection { _ = try await $0.query("select 1") } }
                }
                try await group.waitForAll()
            }
            XCTAssertGreaterThan(LibPQConnection.liveHandleCount, before)
            await pool.close()
        }
        for _ in 0..<1_000 where LibPQConnection.liveHandleCount > before {
            try await Task.sleep(for: .milliseconds(5))
        }
        XCTAssertLessThanOrEqual(LibPQConnection.liveHandleCount, before)
    }

    func testFailedConnectLeavesNoLibPQHandle() async throws {
        let before = LibPQConnection.liveHandleCount
        let pool = PostgresPool(
            configuration: .init(connectionString: "postgresql://iap@127.0.0.1:1/points", connectionsMax: 1))
        _ = try? await pool.withConnection { _ in 0 }
        XCTAssertLessThanOrEqual(LibPQConnection.liveHandleCount, before)
    }

    /// A second statement started while one runs on the same connection is
    /// refused (libpq must not be entered from two threads), and the first
    /// one still answers; the connection stays usable.
    func testConcurrentStatementOnOneConnectionIsRefused() async throws {
        let pool = try await TestDatabase.pool(connectionsMax: 1)
        try await pool.withConnection { connection in
            async let slow = connection.query("select pg_sleep(1)::text as slept, 7 as seven")
            // Until the slow statement is on its way a second one may still
            // run first; try again (bounded) until it meets the slow one.
            var refusal: PostgresError?
            for _ in 0..<40 where refusal == nil {
                try await Task.sleep(for: .milliseconds(20))
                do { try await connection.query("select 1") } catch let error as PostgresError { refusal = error }
            }
            XCTAssertEqual(refusal?.code, .connectionBusy)
            XCTAssertEqual(refusal?.isConnectionLoss, false)
            let rows = try await slow
            XCTAssertEqual(try rows.first?.int64("seven"), 7)
            XCTAssertFalse(connection.isBroken)
            let again = try await connection.query("select 2 as two")
            XCTAssertEqual(try again.first?.int64("two"), 2)
        }
        await pool.close()
    }
}
