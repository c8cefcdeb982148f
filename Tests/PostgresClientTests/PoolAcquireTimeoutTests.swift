import PostgresClient
import XCTest

/// The acquire timeout on a manual clock: a waiter fails exactly when the
/// clock passes `acquireTimeoutMilliseconds`, not a millisecond earlier, and
/// a waiter served in time leaves no timeout behind. No real time passes.
final class PoolAcquireTimeoutTests: XCTestCase {
    func testAWaiterTimesOutWhenTheClockPassesTheTimeoutAndNotBefore() async throws {
        let clock = ManualClock()
        let pool = try await TestDatabase.pool(maxConnections: 1, acquireTimeoutMilliseconds: 60_000, clock: clock)
        let leased = Gate()
        let release = Gate()
        let holder = Task { try await pool.withConnection { _ in await leased.open(); await release.wait() } }
        await leased.wait()
        let waiter = Task { try await pool.withConnection { _ in 1 } }
        guard await clock.waitForSleepers(count: 1) else {
            XCTFail("the waiter's timeout does not run on the injected clock")
            waiter.cancel()
            await release.open()
            return
        }

        clock.advance(by: .milliseconds(59_999))
        XCTAssertEqual(clock.sleeperCount, 1, "a millisecond early, the waiter still waits")
        let waiting = await pool.statistics.waiters
        XCTAssertEqual(waiting, 1)

        clock.advance(by: .milliseconds(1))
        let error = await expectPostgresError { try await waiter.value }
        XCTAssertEqual(error?.code, .timeout)
        let afterTimeout = await pool.statistics.waiters
        XCTAssertEqual(afterTimeout, 0)

        await release.open()
        try await holder.value
        await pool.close()
    }

    func testAWaiterServedInTimeCancelsItsTimeout() async throws {
        let clock = ManualClock()
        let pool = try await TestDatabase.pool(maxConnections: 1, acquireTimeoutMilliseconds: 60_000, clock: clock)
        let leased = Gate()
        let release = Gate()
        let holder = Task { try await pool.withConnection { _ in await leased.open(); await release.wait() } }
        await leased.wait()
        let waiter = Task { try await pool.withConnection { _ in 1 } }
        guard await clock.waitForSleepers(count: 1) else {
            XCTFail("the waiter's timeout does not run on the injected clock")
            waiter.cancel()
            await release.open()
            return
        }

        await release.open()
        try await holder.value
        let value = try await waiter.value
        XCTAssertEqual(value, 1)
        XCTAssertEqual(clock.sleeperCount, 0, "the handed-over waiter's timeout was cancelled")
        // Far past the timeout: nothing fires, and the pool still serves.
        clock.advance(by: .seconds(3_600))
        let again = try await pool.withConnection { _ in 2 }
        XCTAssertEqual(again, 2)
        await pool.close()
    }
}
