import IAPCreditsClient
import XCTest

final class RetryScheduleTests: XCTestCase {
    func testDelaysDoubleUpToTheCapWithJitterInTheUpperHalf() {
        let schedule = RetrySchedule(
            initialDelayMilliseconds: 1_000, maximumDelayMilliseconds: 8_000, attemptsPerSessionMax: 6)
        let steps: [Int64] = [1_000, 2_000, 4_000, 8_000, 8_000, 8_000]
        for (index, step) in steps.enumerated() {
            XCTAssertEqual(schedule.delayMilliseconds(beforeRetry: index + 1, unitRandom: 0), step / 2)
            XCTAssertEqual(schedule.delayMilliseconds(beforeRetry: index + 1, unitRandom: 0.999_999), step - 1)
            for random in stride(from: 0.0, to: 1.0, by: 0.05) {
                let delay = schedule.delayMilliseconds(beforeRetry: index + 1, unitRandom: random)!
                XCTAssertTrue((step / 2)...step ~= delay)
            }
        }
    }

    func testRetriesStopAfterTheSessionBudget() {
        let schedule = RetrySchedule(
            initialDelayMilliseconds: 10, maximumDelayMilliseconds: 10, attemptsPerSessionMax: 3)
        XCTAssertNotNil(schedule.delayMilliseconds(beforeRetry: 3, unitRandom: 0.5))
        XCTAssertNil(schedule.delayMilliseconds(beforeRetry: 4, unitRandom: 0.5))
    }

    func testOutOfRangeRandomIsClamped() {
        let schedule = RetrySchedule(
            initialDelayMilliseconds: 100, maximumDelayMilliseconds: 100, attemptsPerSessionMax: 1)
        XCTAssertEqual(schedule.delayMilliseconds(beforeRetry: 1, unitRandom: -3), 50)
        XCTAssertEqual(schedule.delayMilliseconds(beforeRetry: 1, unitRandom: 7), 100)
    }

    func testTheDefaultIsAMinuteScaleBackoff() {
        let schedule = RetrySchedule()
        XCTAssertEqual(schedule.delayMilliseconds(beforeRetry: 1, unitRandom: 0), 1_000)
        XCTAssertEqual(schedule.delayMilliseconds(beforeRetry: 30, unitRandom: 0), nil)
        XCTAssertEqual(schedule.delayMilliseconds(beforeRetry: schedule.attemptsPerSessionMax, unitRandom: 0), 150_000)
    }
}
