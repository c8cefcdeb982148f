import XCTest
@testable import PostgresClient

/// What the pool's configuration hands libpq: durations become PostgreSQL's
/// whole milliseconds.
final class PoolConfigurationTests: XCTestCase {
    private func options(_ configuration: PostgresPool.Configuration) -> String? {
        configuration.libpqParameters.first { $0.0 == "options" }?.1
    }

    func testTheStatementTimeoutIsSentInWholeMilliseconds() throws {
        let standard = PostgresPool.Configuration(connectionString: "postgresql://iap@127.0.0.1/points")
        XCTAssertEqual(standard.statementTimeout, .seconds(30))
        XCTAssertEqual(standard.acquireTimeout, .seconds(5))
        XCTAssertTrue(try XCTUnwrap(options(standard)).contains("-c statement_timeout=30000 "))
        let fractional = PostgresPool.Configuration(
            connectionString: "postgresql://iap@127.0.0.1/points", statementTimeout: .microseconds(1_500_900))
        XCTAssertTrue(try XCTUnwrap(options(fractional)).contains("-c statement_timeout=1500 "))
    }

    func testWholeMillisecondsRoundDown() {
        XCTAssertEqual(PostgresPool.Configuration.wholeMilliseconds(.milliseconds(1)), 1)
        XCTAssertEqual(PostgresPool.Configuration.wholeMilliseconds(.nanoseconds(999_999)), 0)
        XCTAssertEqual(PostgresPool.Configuration.wholeMilliseconds(.seconds(86_400)), 86_400_000)
    }
}
