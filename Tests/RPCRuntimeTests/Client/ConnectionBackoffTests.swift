import RPCRuntime
import XCTest

final class ConnectionBackoffTests: XCTestCase {
    func testBackoffGrowsAndCaps() {
        let backoff = ConnectionBackoff(initialDelay: .milliseconds(100), multiplier: 2, maximumDelay: .milliseconds(500))
        XCTAssertEqual(backoff.delay(afterFailures: 1), .milliseconds(100))
        XCTAssertEqual(backoff.delay(afterFailures: 2), .milliseconds(200))
        XCTAssertEqual(backoff.delay(afterFailures: 3), .milliseconds(400))
        XCTAssertEqual(backoff.delay(afterFailures: 4), .milliseconds(500))
        XCTAssertEqual(backoff.delay(afterFailures: 1000), .milliseconds(500))
    }
}
