import Foundation
import PostgresClient
import XCTest

/// A one-shot gate a test opens to let a parked task continue.
actor Gate {
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiting.append($0) }
    }

    func open() {
        isOpen = true
        for continuation in waiting { continuation.resume() }
        waiting.removeAll()
    }
}

final class PostgresPoolTests: XCTestCase {
    /// Polls (bounded) until the pool reports `count` waiters; synchronisation, not a timing assertion.
    private func waitForWaiters(_ pool: PostgresPool, count: Int) async throws {
        for _ in 0..<2_000 {
            if await pool.statistics.waiters == count { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        XCTFail("pool never reached \(count) waiters")
    }

    func testTwoHundredTasksShareEightConnections() async throws {
        let pool = try await TestDatabase.pool(connectionsMax: 8)
        let pids = try await withThrowingTaskGroup(of: Int64.self) { group in
            for index in 0..<200 {
                group.addTask {
                    try await pool.withConnection { connection in
                        let row = try await connection.query(
                            "select pg_backend_pid()::bigint as pid, $1::bigint as echo", [.int64(Int64(index))]
                        ).first!
                        XCTAssertEqual(try row.int64("echo"), Int64(index))
                        return try row.int64("pid")
                    }
                }
            }
            var pids: [Int64] = []
            for try await pid in group { pids.append(pid) }
            return pids
        }
        XCTAssertEqual(pids.count, 200)
        XCTAssertLessThanOrEqual(Set(pids).count, 8)
        let stats = await pool.statistics
        XCTAssertLessThanOrEqual(stats.peakOpenConnections, 8)
        XCTAssertEqual(stats.waiters, 0)
        XCTAssertEqual(stats.idleConnections, stats.openConnections)
        XCTAssertTrue(pool.isHealthy)
    }

    func testFullWaitQueueFailsWithPoolExhausted() async throws {
        let pool = try await TestDatabase.pool(connectionsMax: 1, waitersMax: 1)
        let gate = Gate()
        let holder = Task { try await pool.withConnection { _ in await gate.wait() } }
        try await waitForHolder(pool)
        let waiter = Task {
            try await pool.withConnection { try await $0.query("select 1 as one").first!.int64("one") }
        }
        try await waitForWaiters(pool, count: 1)

        let error = await expectPostgresError { try await pool.withConnection { _ in 0 } }
        XCTAssertEqual(error?.code, .poolExhausted)

        await gate.open()
        try await holder.value
        let value = try await waiter.value
        XCTAssertEqual(value, 1, "the queued caller gets the connection once it is returned")
    }

    func testAcquireTimesOutWhenNoConnectionFreesUp() async throws {
        let pool = try await TestDatabase.pool(connectionsMax: 1, acquireTimeout: .milliseconds(100))
        let gate = Gate()
        let holder = Task { try await pool.withConnection { _ in await gate.wait() } }
        try await waitForHolder(pool)
        let error = await expectPostgresError { try await pool.withConnection { _ in 0 } }
        XCTAssertEqual(error?.code, .timeout)
        await gate.open()
        try await holder.value
        let stats = await pool.statistics
        XCTAssertEqual(stats.waiters, 0)
    }

    func testUnreachableServerFailsWithConnectionFailedAndUnhealthy() async throws {
        let pool = PostgresPool(
            configuration: .init(connectionString: "postgresql://iap@127.0.0.1:1/points", connectionsMax: 2))
        let error = await expectPostgresError { try await pool.withConnection { _ in 0 } }
        XCTAssertEqual(error?.code, .connectionFailed)
        XCTAssertEqual(error?.isConnectionLoss, true)
        XCTAssertFalse(pool.isHealthy)
        let stats = await pool.statistics
        XCTAssertEqual(stats.openConnections, 0, "a failed connect gives its slot back")
    }

    func testTerminatedBackendIsReplacedOnTheNextCall() async throws {
        let pool = try await TestDatabase.pool(connectionsMax: 1)
        let admin = try await TestDatabase.pool(connectionsMax: 1)
        let firstPID = try await pool.withConnection {
            try await $0.query("select pg_backend_pid()::bigint as pid").first!.int64("pid")
        }
        try await terminate(firstPID, using: admin)

        // The idle connection is dead; the first statement on it reports the loss...
        let error = await expectPostgresError { try await pool.withConnection { try await $0.query("select 1") } }
        XCTAssertEqual(error?.isConnectionLoss, true)
        XCTAssertFalse(pool.isHealthy)
        // ...and the next call reconnects by itself.
        let secondPID = try await pool.withConnection {
            try await $0.query("select pg_backend_pid()::bigint as pid").first!.int64("pid")
        }
        XCTAssertNotEqual(secondPID, firstPID)
        XCTAssertTrue(pool.isHealthy)
    }

    func testTransactionRetriesBeginOnADeadConnection() async throws {
        let pool = try await TestDatabase.pool(connectionsMax: 1)
        let admin = try await TestDatabase.pool(connectionsMax: 1)
        let firstPID = try await pool.withConnection {
            try await $0.query("select pg_backend_pid()::bigint as pid").first!.int64("pid")
        }
        try await terminate(firstPID, using: admin)
        let secondPID = try await pool.withTransaction {
            try await $0.query("select pg_backend_pid()::bigint as pid").first!.int64("pid")
        }
        XCTAssertNotEqual(secondPID, firstPID)
        let probed = await pool.probe()
        XCTAssertTrue(probed)
    }

    private func terminate(_ pid: Int64, using admin: PostgresPool) async throws {
        let terminated = try await admin.withConnection { connection in
            try await connection.query("select pg_terminate_backend($1::integer, 5000) as ok", [.int64(pid)]).first!
                .bool("ok")
        }
        XCTAssertTrue(terminated)
    }

    private func waitForHolder(_ pool: PostgresPool) async throws {
        for _ in 0..<2_000 {
            let stats = await pool.statistics
            if stats.openConnections == 1 && stats.idleConnections == 0 { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        XCTFail("the holder never leased the connection")
    }
}

extension PostgresPoolTests {
    func testCancelledWaiterLeavesTheQueue() async throws {
        let pool = try await TestDatabase.pool(connectionsMax: 1)
        let gate = Gate()
        let holder = Task { try await pool.withConnection { _ in await gate.wait() } }
        try await waitForHolder(pool)
        let waiter = Task { try await pool.withConnection { _ in 1 } }
        try await waitForWaiters(pool, count: 1)
        waiter.cancel()
        let error = await expectPostgresError { try await waiter.value }
        XCTAssertEqual(error?.code, .cancelled)
        let waiters = await pool.statistics.waiters
        XCTAssertEqual(waiters, 0)
        await gate.open()
        try await holder.value
    }
}
