@testable import RPCRuntime
import XCTest

/// The token bucket over streams reset before their answer, on a clock
/// moved by hand.
final class StreamResetBudgetTests: XCTestCase {
    private let start = ContinuousClock.now

    private func at(milliseconds: Int64) -> ContinuousClock.Instant {
        start.advanced(by: .milliseconds(milliseconds))
    }

    func testTheBurstIsSpentThenRefused() {
        var budget = StreamResetBudget(burstMax: 3, refillPerSecond: 1, now: start)
        XCTAssertTrue(budget.spend(now: start))
        XCTAssertTrue(budget.spend(now: start))
        XCTAssertTrue(budget.spend(now: start))
        XCTAssertFalse(budget.spend(now: start))
        XCTAssertFalse(budget.spend(now: start), "a refusal takes nothing and gives nothing")
        XCTAssertEqual(budget.available(now: start), 0)
    }

    func testItRefillsAtTheRateFromTheLastRefill() {
        var budget = StreamResetBudget(burstMax: 10, refillPerSecond: 33, now: start)
        for _ in 0..<10 { XCTAssertTrue(budget.spend(now: start)) }
        XCTAssertFalse(budget.spend(now: at(milliseconds: 30)), "0.99 of a reset after 30 ms")
        XCTAssertTrue(budget.spend(now: at(milliseconds: 31)), "1.023 after 31 ms")
        XCTAssertFalse(budget.spend(now: at(milliseconds: 31)))
        // 0.023 left; 1000 ms more give 33.
        XCTAssertEqual(budget.available(now: at(milliseconds: 1_031)), 10, "never above the burst")
        XCTAssertEqual(budget.available(now: at(milliseconds: 231)), 6, "0.023 + 200 ms at 33 a second")
    }

    func testAClockThatDoesNotMoveOrGoesBackGivesNothing() {
        var budget = StreamResetBudget(burstMax: 1, refillPerSecond: 1000, now: at(milliseconds: 100))
        XCTAssertTrue(budget.spend(now: at(milliseconds: 100)))
        XCTAssertFalse(budget.spend(now: at(milliseconds: 50)))
        XCTAssertFalse(budget.spend(now: at(milliseconds: 100)))
        XCTAssertTrue(budget.spend(now: at(milliseconds: 101)))
    }

    func testALongQuietSpellFillsTheBucketOnly() {
        var budget = StreamResetBudget(burstMax: 1000, refillPerSecond: 33, now: start)
        for _ in 0..<1000 { XCTAssertTrue(budget.spend(now: start)) }
        let years = start.advanced(by: .seconds(100 * 365 * 24 * 3600))
        XCTAssertEqual(budget.available(now: years), 1000)
        for _ in 0..<1000 { XCTAssertTrue(budget.spend(now: years)) }
        XCTAssertFalse(budget.spend(now: years))
    }

    func testNoRefillMeansTheBurstIsAll() {
        var budget = StreamResetBudget(burstMax: 2, refillPerSecond: 0, now: start)
        XCTAssertTrue(budget.spend(now: start))
        XCTAssertTrue(budget.spend(now: at(milliseconds: 10_000)))
        XCTAssertFalse(budget.spend(now: at(milliseconds: 100_000_000)))
    }
}
