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
        let pool = PostgresPool(
            configuration: .init(connectionString: base + "?options=-csearch_path%3D\(schema)", connectionsMax: 1))
        let (searchPath, timeZone) = try await pool.withConnection { connection in
            let row = try await connection.query(
                "select current_setting('search_path') as p, current_setting('TimeZone') as z"
            ).first!
            return (try row.string("p"), try row.string("z"))
        }
        XCTAssertEqual(searchPath, schema)
        XCTAssertEqual(timeZone, "UTC")
        await pool.close()
        try await plain.withConnection { _ = try await $0.execute("drop schema \(schema)") }
        await plain.close()
    }

    /// The pool's defaults yield to the operator's URL (they were passed
    /// after it, and libpq keeps a keyword's last value), and the session
    /// settings the decoders need still apply.
    func testTheURLsOwnSettingsWinOverThePoolsDefaults() async throws {
        guard let base = ProcessInfo.processInfo.environment["POINTS_DATABASE_URL"], !base.isEmpty else {
            return XCTFail("POINTS_DATABASE_URL is not set: run scripts/test.sh")
        }
        let separator = base.contains("?") ? "&" : "?"
        let pool = PostgresPool(
            configuration: .init(
                connectionString: base + separator + "application_name=operator-chosen&client_encoding=LATIN1",
                connectionsMax: 1, applicationName: "pool-default"))
        let (name, encoding) = try await pool.withConnection { connection in
            let row = try await connection.query(
                "select current_setting('application_name') as n, current_setting('client_encoding') as e"
            ).first!
            return (try row.string("n"), try row.string("e"))
        }
        XCTAssertEqual(name, "operator-chosen")
        XCTAssertEqual(encoding, "UTF8", "pinned: the decoders read UTF-8")
        await pool.close()
    }
}
