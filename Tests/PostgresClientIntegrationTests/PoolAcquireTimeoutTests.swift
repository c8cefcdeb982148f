import PostgresClient
import XCTest

/// The acquire timeout on a manual clock: a waiter fails exactly when the
/// clock passes `acquireTimeout`, not a millisecond earlier, and
/// a waiter served in time leaves no timeout behind. No real time passes.
final class PoolAcquireTimeoutTests: XCTestCase {
    /// A one-connection pool on a manual clock, its connection held until
    /// `release` opens, and a second caller waiting with its timeout armed.
    private struct Scene {
        let clock: ManualClock
        let pool: PostgresPool
        let release: Gate
        let holder: Task<Void, any Error>
        let waiter: Task<Int, any Error>
    }

    /// Nil (after failing the test) when the timeout does not sleep on the clock.
    private func makeScene(acquireTimeout: Duration) async throws -> Scene? {
        let clock = ManualClock()
        let pool = try await TestDatabase.pool(connectionsMax: 1, acquireTimeout: acquireTimeout, clock: clock)
        let leased = Gate()
        let release = Gate()
        let holder = Task {
            try await pool.withConnection { _ in
                await leased.open(); await release.wait()
            }
        }
        await leased.wait()
        let waiter = Task { try await pool.withConnection { _ in 1 } }
        guard await clock.waitForSleepers(count: 1) else {
            XCTFail("the waiter's timeout does not run on the injected clock")
            waiter.cancel()
            await release.open()
            return nil
        }
        return Scene(clock: clock, pool: pool, release: release, holder: holder, waiter: waiter)
    }

    func testAWaiterTimesOutWhenTheClockPassesTheTimeoutAndNotBefore() async throws {
        guard let scene = try await makeScene(acquireTimeout: .seconds(60)) else { return }
        scene.clock.advance(by: .milliseconds(59_999))
        XCTAssertEqual(scene.clock.sleeperCount, 1, "a millisecond early, the waiter still waits")
        let waiting = await scene.pool.statistics.waiters
        XCTAssertEqual(waiting, 1)

        scene.clock.advance(by: .milliseconds(1))
        let error = await expectPostgresError { try await scene.waiter.value }
        XCTAssertEqual(error?.code, .timeout)
        let afterTimeout = await scene.pool.statistics.waiters
        XCTAssertEqual(afterTimeout, 0)

        await scene.release.open()
        try await scene.holder.value
        await scene.pool.close()
    }

    func testAWaiterServedInTimeCancelsItsTimeout() async throws {
        guard let scene = try await makeScene(acquireTimeout: .seconds(60)) else { return }
        await scene.release.open()
        try await scene.holder.value
        let value = try await scene.waiter.value
        XCTAssertEqual(value, 1)
        XCTAssertEqual(scene.clock.sleeperCount, 0, "the handed-over waiter's timeout was cancelled")
        // Far past the timeout: nothing fires, and the pool still serves.
        scene.clock.advance(by: .seconds(3_600))
        let again = try await scene.pool.withConnection { _ in 2 }
        XCTAssertEqual(again, 2)
        await scene.pool.close()
    }
}
