@testable import PostgresClient
import XCTest

final class ConnectionLifetimeTests: XCTestCase {
    /// Every connection's thread ends (after PQfinish) once the pool is closed and dropped.
    func testClosedPoolLeavesNoWorkerThreads() async throws {
        let before = BlockingWorker.liveThreadCount
        do {
            let pool = try await TestDatabase.pool(connectionsMax: 4)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 { group.addTask { try await pool.withConnection { _ = try await $0.query("select 1") } } }
                try await group.waitForAll()
            }
            XCTAssertGreaterThan(BlockingWorker.liveThreadCount, before)
            await pool.close()
        }
        for _ in 0..<1_000 where BlockingWorker.liveThreadCount > before {
            try await Task.sleep(for: .milliseconds(5))
        }
        XCTAssertLessThanOrEqual(BlockingWorker.liveThreadCount, before)
    }

    func testFailedConnectLeavesNoWorkerThread() async throws {
        let before = BlockingWorker.liveThreadCount
        let pool = PostgresPool(configuration: .init(connectionString: "postgresql://iap@127.0.0.1:1/points", connectionsMax: 1))
        _ = try? await pool.withConnection { _ in 0 }
        for _ in 0..<1_000 where BlockingWorker.liveThreadCount > before {
            try await Task.sleep(for: .milliseconds(5))
        }
        XCTAssertLessThanOrEqual(BlockingWorker.liveThreadCount, before)
    }
}
