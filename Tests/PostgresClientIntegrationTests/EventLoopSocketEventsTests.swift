import PostgresClient
import RPCRuntime
import ServiceKitDatabase
import XCTest

/// A pool whose statements wait for their sockets on an RPCRuntime loop
/// (`EventLoopSocketEvents`, as PointsService runs it): answers come back on
/// the loop to a task there and to tasks elsewhere, a lost connection fails
/// its statement and the pool recovers, and closing the pool leaves the
/// loop to its owner.
final class EventLoopSocketEventsTests: XCTestCase {
    private func pool(on loop: EventLoop, connectionsMax: Int = 4) throws -> PostgresPool {
        PostgresPool(
            configuration: .init(
                connectionString: try TestDatabase.url(), connectionsMax: connectionsMax,
                socketEvents: EventLoopSocketEvents(loop: loop)))
    }

    func testAnswersReachTasksOnTheLoopAndElsewhere() async throws {
        let loop = try EventLoop(name: "test")
        let pool = try pool(on: loop)
        let onLoop = try await Task(executorPreference: loop) { () -> [Bool] in
            var seen: [Bool] = []
            for value in 1...3 {
                let rows = try await pool.withConnection {
                    try await $0.query("select $1::int as n", [.text(String(value))])
                }
                XCTAssertEqual(try rows.first?.int64("n"), Int64(value))
                seen.append(loop.inEventLoop)
            }
            return seen
        }.value
        XCTAssertEqual(onLoop, [true, true, true])
        let answers = try await withThrowingTaskGroup(of: Int64.self) { group in
            for value in 0..<40 {
                group.addTask {
                    let rows = try await pool.withConnection {
                        try await $0.query("select $1::int as n from pg_sleep(0.005)", [.text(String(value))])
                    }
                    return try rows.first!.int64("n")
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(answers.sorted(), (0..<40).map(Int64.init))
        await pool.close()
        await loop.shutdown()
    }

    func testALostConnectionFailsItsStatementAndThePoolRecovers() async throws {
        let loop = try EventLoop(name: "test")
        let pool = try pool(on: loop, connectionsMax: 2)
        let victim = try await pool.withConnection { try await $0.query("select pg_backend_pid() as pid") }.first!
            .int64("pid")
        async let slept: Void = pool.withConnection { connection in
            _ = try await connection.query(
                "select pg_sleep(5) where pg_backend_pid() = $1::int", [.text(String(victim))])
        }
        try await Task.sleep(for: .milliseconds(200))
        let killer = PostgresPool(configuration: .init(connectionString: try TestDatabase.url(), connectionsMax: 1))
        try await killer.withConnection {
            _ = try await $0.query("select pg_terminate_backend($1::int)", [.text(String(victim))])
        }
        await killer.close()
        do {
            try await slept
            XCTFail("the statement on the terminated connection succeeded")
        } catch let error as PostgresError {
            XCTAssertTrue(error.isConnectionLoss, "\(error)")
        }
        let rows = try await pool.withConnection { try await $0.query("select 7 as n") }
        XCTAssertEqual(try rows.first?.int64("n"), 7)
        await pool.close()
        XCTAssertTrue(loop.execute {}, "the pool's close leaves the loop to its owner")
        await loop.shutdown()
    }
}
