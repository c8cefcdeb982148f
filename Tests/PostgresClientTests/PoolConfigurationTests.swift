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

    /// Defaults the connection string may override come before it (libpq
    /// keeps the last value of a keyword); what the decoders need, after.
    func testDefaultsPrecedeTheConnectionStringAndPinnedSettingsFollowIt() throws {
        let keywords = PostgresPool.Configuration(connectionString: "postgresql://iap@127.0.0.1/points").libpqParameters
            .map(\.0)
        let dbname = try XCTUnwrap(keywords.firstIndex(of: "dbname"))
        for keyword in [
            "connect_timeout", "application_name", "keepalives", "keepalives_idle", "keepalives_interval",
            "keepalives_count", "tcp_user_timeout",
        ] {
            XCTAssertLessThan(try XCTUnwrap(keywords.firstIndex(of: keyword), keyword), dbname, keyword)
        }
        for keyword in ["client_encoding", "options"] {
            XCTAssertGreaterThan(try XCTUnwrap(keywords.firstIndex(of: keyword), keyword), dbname, keyword)
        }
    }

    func testWholeMillisecondsRoundDown() {
        XCTAssertEqual(PostgresPool.Configuration.wholeMilliseconds(.milliseconds(1)), 1)
        XCTAssertEqual(PostgresPool.Configuration.wholeMilliseconds(.nanoseconds(999_999)), 0)
        XCTAssertEqual(PostgresPool.Configuration.wholeMilliseconds(.seconds(86_400)), 86_400_000)
    }
}
