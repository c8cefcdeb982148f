import Foundation
@testable import PostgresClient
import XCTest

/// The integration database: POINTS_DATABASE_URL (scripts/test.sh sets it).
/// Each test isolates itself in a fresh schema.
enum TestDatabase {
    struct MissingURL: Error, CustomStringConvertible {
        var description: String {
            "POINTS_DATABASE_URL is not set: run scripts/test.sh, or eval \"$(scripts/pg.sh start | sed 's/^/export /')\""
        }
    }

    static func url() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["POINTS_DATABASE_URL"], !url.isEmpty else {
            XCTFail(MissingURL().description)
            throw MissingURL()
        }
        return url
    }

    /// A fresh schema name, unique per call.
    static func freshSchemaName() -> String {
        "pgtest_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
    }

    /// A pool whose sessions live in a freshly created schema (or `schema`).
    static func pool(
        connectionsMax: Int = 4, waitersMax: Int = 1_000, acquireTimeout: Duration = .seconds(10),
        schema: String? = nil, clock: any Clock<Duration> = ContinuousClock()
    ) async throws -> PostgresPool {
        let url = try url()
        let schema = schema ?? freshSchemaName()
        let setup = PostgresPool(configuration: .init(connectionString: url, connectionsMax: 1))
        try await setup.withConnection { connection in
            try await connection.execute("create schema if not exists \(schema)")
        }
        await setup.close()
        return PostgresPool(
            configuration: .init(
                connectionString: url, connectionsMax: connectionsMax, waitersMax: waitersMax,
                acquireTimeout: acquireTimeout, searchPath: schema), clock: clock)
    }
}

/// Asserts that `body` throws a PostgresError and returns it.
func expectPostgresError<T>(_ body: () async throws -> T, file: StaticString = #filePath, line: UInt = #line) async
    -> PostgresError?
{
    do {
        _ = try await body()
        XCTFail("expected a PostgresError", file: file, line: line)
        return nil
    } catch let error as PostgresError {
        return error
    } catch {
        XCTFail("expected a PostgresError, got \(error)", file: file, line: line)
        return nil
    }
}
