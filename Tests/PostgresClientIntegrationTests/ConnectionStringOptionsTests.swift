import Foundation
import PostgresClient
import XCTest

/// An operator's `options` in DATABASE_URL survive the pool's own settings.
final class ConnectionStringOptionsTests: XCTestCase {
    func testSearchPathFromTheURLIsKeptAndSessionSettingsStillApply() async throws {
        guard let base = ProcessInfo.processInfo.environment["POINTS_DATABASE_URL"], !base.isEmpty else {
            return XCTFail("POINTS_DATABASE_URL is not set: run scripts/test.sh")
        }
        let schema = "opts_\(UInt32.random(in: 1...UInt32.max))"
        let plain = PostgresPool(configuration: .init(connectionString: base, connectionsMax: 1))
        try await plain.withConnection { _ = try await $0.execute("create schema \(schema)") }
        let pool = PostgresPool(configuration: .init(connectionString: base + "?options=-csearch_path%3D\(schema)", connectionsMax: 1))
        let (searchPath, timeZone) = try await pool.withConnection { connection in
            let row = try await connection.query("select current_setting('search_path') as p, current_setting('TimeZone') as z").first!
            return (try row.string("p"), try row.string("z"))
        }
        XCTAssertEqual(searchPath, schema)
        XCTAssertEqual(timeZone, "UTC")
        await pool.close()
        try await plain.withConnection { _ = try await $0.execute("drop schema \(schema)") }
        await plain.close()
    }
}
