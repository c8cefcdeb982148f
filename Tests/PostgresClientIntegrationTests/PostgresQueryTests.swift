import Foundation
import PostgresClient
import XCTest

final class PostgresQueryTests: XCTestCase {
    func testTypedAccessorsDecodeEveryColumnType() async throws {
        let pool = try await TestDatabase.pool()
        let id = UUID()
        let rows = try await pool.withConnection { connection in
            try await connection.query(
                """
                select 42::bigint as n, true as yes, false as no, $1::uuid as id, 'héllo 世界 🎉'::text as greeting,
                       null::text as nothing, '2026-11-29 17:51:34.25+00'::timestamptz as at,
                       '{"a": [1, 2]}'::jsonb as doc
                """, [.uuid(id)])
        }
        XCTAssertEqual(rows.count, 1)
        let row = try XCTUnwrap(rows.first)
        XCTAssertEqual(try row.int64("n"), 42)
        XCTAssertTrue(try row.bool("yes"))
        XCTAssertFalse(try row.bool("no"))
        XCTAssertEqual(try row.uuid("id"), id)
        XCTAssertEqual(try row.string("greeting"), "héllo 世界 🎉")
        XCTAssertNil(try row.optionalString("nothing"))
        XCTAssertTrue(try row.isNull("nothing"))
        XCTAssertEqual(try row.date("at").timeIntervalSince1970, 1_795_974_694.25, accuracy: 0.000_1)
        XCTAssertEqual(try row.json("doc"), #"{"a": [1, 2]}"#)
        let null = await expectPostgresError { try row.string("nothing") }
        XCTAssertEqual(null?.code, .decodingFailed)
        let missing = await expectPostgresError { try row.string("absent") }
        XCTAssertEqual(missing?.code, .decodingFailed)
        let notNumber = await expectPostgresError { try row.int64("greeting") }
        XCTAssertEqual(notNumber?.code, .decodingFailed)
    }

    func testParametersRoundTripIncludingNullAndUnicode() async throws {
        let pool = try await TestDatabase.pool()
        let text = "ünïcödé ✓ 'quoted' \"double\" \\ back; drop table x; --"
        let values: [PostgresValue] = [.text(text), .null, .int64(Int64.min), .bool(true), .json(#"{"k":"v"}"#)]
        let row = try await pool.withConnection { connection in
            try await connection.query(
                "select $1::text as t, $2::text as n, $3::bigint as i, $4::boolean as b, ($5::jsonb)->>'k' as j", values
            ).first
        }
        let unwrapped = try XCTUnwrap(row)
        XCTAssertEqual(try unwrapped.string("t"), text)
        XCTAssertNil(try unwrapped.optionalString("n"))
        XCTAssertEqual(try unwrapped.int64("i"), Int64.min)
        XCTAssertTrue(try unwrapped.bool("b"))
        XCTAssertEqual(try unwrapped.string("j"), "v")
    }

    func testPreparedStatementIsPreparedOncePerConnection() async throws {
        let pool = try await TestDatabase.pool(connectionsMax: 1)
        let count = try await pool.withConnection { connection in
            for value in 0..<5 {
                let row = try await connection.query("select $1::bigint + 1 as next", [.int64(Int64(value))]).first!
                XCTAssertEqual(try row.int64("next"), Int64(value + 1))
            }
            return try await connection.query(
                "select count(*) as c from pg_prepared_statements where statement = 'select $1::bigint + 1 as next'"
            ).first!.int64("c")
        }
        XCTAssertEqual(count, 1)
    }

    func testTransactionCommitsAndRollsBackOnThrow() async throws {
        let pool = try await TestDatabase.pool()
        try await pool.withConnection { try await $0.execute("create table items (name text primary key)") }
        struct Abort: Error {}

        try await pool.withTransaction { tx in
            try await tx.query("insert into items values ($1)", [.text("kept")])
        }
        do {
            try await pool.withTransaction { tx in
                try await tx.query("insert into items values ($1)", [.text("discarded")])
                throw Abort()
            }
            XCTFail("the body's error must propagate")
        } catch is Abort {}

        let names = try await pool.withConnection { connection in
            try await connection.query("select name from items order by name").map { try $0.string("name") }
        }
        XCTAssertEqual(names, ["kept"])
    }

    func testUniqueViolationCarriesSQLStateAndRollsBack() async throws {
        let pool = try await TestDatabase.pool()
        try await pool.withConnection { try await $0.execute("create table keys (k text primary key)") }
        try await pool.withTransaction { try await $0.query("insert into keys values ('a')") }
        let error = await expectPostgresError {
            try await pool.withTransaction { tx in
                try await tx.query("insert into keys values ('b')")
                try await tx.query("insert into keys values ('a')")
            }
        }
        XCTAssertEqual(error?.code, .queryFailed)
        XCTAssertEqual(error?.sqlState, "23505")
        XCTAssertEqual(error?.isUniqueViolation, true)
        XCTAssertEqual(error?.isConnectionLoss, false)
        let count = try await pool.withConnection {
            try await $0.query("select count(*) as c from keys").first!.int64("c")
        }
        XCTAssertEqual(count, 1, "'b' must have been rolled back")
    }

    func testCommitOfAbortedTransactionThrows() async throws {
        let pool = try await TestDatabase.pool()
        try await pool.withConnection { try await $0.execute("create table notes (n int)") }
        let error = await expectPostgresError {
            try await pool.withTransaction { tx in
                try await tx.query("insert into notes values (1)")
                _ = try? await tx.query("select 1/0")  // swallowed: the transaction is now aborted
            }
        }
        XCTAssertEqual(error?.code, .transactionAborted)
        let count = try await pool.withConnection {
            try await $0.query("select count(*) as c from notes").first!.int64("c")
        }
        XCTAssertEqual(count, 0)
    }

    func testStatementErrorKeepsTheConnection() async throws {
        let pool = try await TestDatabase.pool(connectionsMax: 1)
        let error = await expectPostgresError { try await pool.withConnection { try await $0.query("selec 1") } }
        XCTAssertEqual(error?.sqlState, "42601")
        let value = try await pool.withConnection { try await $0.query("select 7 as v").first!.int64("v") }
        XCTAssertEqual(value, 7)
        let stats = await pool.statistics
        XCTAssertEqual(stats.openConnections, 1)
    }

    /// libpq hands out a COPY result for ever: reading on spun the reactor
    /// thread every statement of the process shares. The statement fails,
    /// its connection is given up, and the pool serves on.
    func testACopyStatementFailsAndThePoolServesOn() async throws {
        let pool = try await TestDatabase.pool(connectionsMax: 1)
        for sql in ["copy (select 1) to stdout", "copy (select 1) to stdout; select 1"] {
            let error = await expectPostgresError { try await pool.withConnection { try await $0.execute(sql) } }
            XCTAssertEqual(error?.message, "COPY is not supported by this client", sql)
            let value = try await pool.withConnection { try await $0.query("select 8 as v").first!.int64("v") }
            XCTAssertEqual(value, 8)
        }
        await pool.close()
    }

    /// A connection lost at COMMIT leaves the outcome unknown: reported as
    /// such, never as a plain loss a caller could take for "not applied".
    func testALossAtCommitIsReportedAsAnUnknownOutcome() async throws {
        let pool = try await TestDatabase.pool(connectionsMax: 1)
        let killer = try await TestDatabase.pool(connectionsMax: 1)
        let error = await expectPostgresError {
            try await pool.withTransaction { connection in
                let pid = try await connection.query("select pg_backend_pid() as pid").first!.int64("pid")
                _ = try await killer.withConnection {
                    try await $0.query("select pg_terminate_backend($1::int, 5000)", [.int64(pid)])
                }
            }
        }
        XCTAssertEqual(error?.code, .commitOutcomeUnknown)
        XCTAssertEqual(error?.isConnectionLoss, true)
        let value = try await pool.withConnection { try await $0.query("select 9 as v").first!.int64("v") }
        XCTAssertEqual(value, 9, "the pool opened a fresh connection")
        await pool.close()
        await killer.close()
    }

    func testNulBytesAreRefusedRatherThanTruncated() async throws {
        let pool = try await TestDatabase.pool(connectionsMax: 1)
        let inParameter = await expectPostgresError {
            try await pool.withConnection { try await $0.query("select $1::text", [.text("a\u{0}b")]) }
        }
        XCTAssertEqual(inParameter?.code, .invalidParameter)
        let inStatement = await expectPostgresError {
            try await pool.withConnection { try await $0.execute("select 1\u{0}") }
        }
        XCTAssertEqual(inStatement?.code, .invalidParameter)
        let inPreparedStatement = await expectPostgresError {
            try await pool.withConnection { try await $0.query("select 2\u{0}") }
        }
        XCTAssertEqual(inPreparedStatement?.code, .invalidParameter)
        // Nothing was prepared from the truncated text, and the connection still serves.
        let rows = try await pool.withConnection { try await $0.query("select 2 as two") }
        XCTAssertEqual(try rows.first?.int64("two"), 2)
    }

    func testHealthProbesStopWhenCancelled() async throws {
        let pool = try await TestDatabase.pool(connectionsMax: 1)
        let probes = Task { await pool.runHealthProbes(intervalMilliseconds: 10) }
        try await Task.sleep(for: .milliseconds(50))
        probes.cancel()
        await probes.value
        XCTAssertTrue(pool.isHealthy)
    }
}
