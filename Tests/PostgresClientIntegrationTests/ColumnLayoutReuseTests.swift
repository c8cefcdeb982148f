@testable import PostgresClient
import XCTest

/// A prepared statement's later results reuse the column layout of its last
/// one (`ColumnLayout`) only while they name the same columns.
final class ColumnLayoutReuseTests: XCTestCase {
    private static func namesStorage(_ rows: PostgresRows) -> UnsafeRawPointer? {
        rows.layout.names.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }

    func testAPreparedStatementsLaterResultsShareItsLayout() async throws {
        let pool = try await TestDatabase.pool(connectionsMax: 1)
        let sql = "select $1::bigint as n, 'x'::text as label, $1::bigint + 1 as next, null::text as nothing"
        let (first, second, other) = try await pool.withConnection { connection in
            (
                try await connection.query(sql, [.int64(1)]), try await connection.query(sql, [.int64(2)]),
                try await connection.query("select 3::bigint as n", [])
            )
        }
        XCTAssertEqual(first.columns, ["n", "label", "next", "nothing"])
        XCTAssertEqual(second.columns, first.columns)
        XCTAssertEqual(
            Self.namesStorage(second), Self.namesStorage(first), "the second result reuses the first one's layout")
        XCTAssertNotEqual(Self.namesStorage(other), Self.namesStorage(first))
        XCTAssertEqual(try second.first?.int64("n"), 2)
        XCTAssertEqual(try second.first?.int64("next"), 3)
        XCTAssertEqual(try second.first?.string("label"), "x")
        XCTAssertNil(try second.first?.optionalString("nothing"))
        XCTAssertEqual(try other.first?.int64("n"), 3)
        await pool.close()
    }

    /// A column renamed under a prepared `select *`: PostgreSQL refuses the
    /// stored plan, the statement is prepared afresh, and its rows carry the
    /// new name, not the remembered one.
    func testARenamedColumnIsReadUnderItsNewName() async throws {
        let schema = TestDatabase.freshSchemaName()
        let pool = try await TestDatabase.pool(connectionsMax: 1, schema: schema)
        let admin = try await TestDatabase.pool(connectionsMax: 1, schema: schema)
        try await admin.withConnection {
            try await $0.execute(
                "create table layout_items (id bigint primary key, amount bigint); insert into layout_items values (1, 40)"
            )
        }
        let sql = "select * from layout_items order by id"
        let before = try await pool.withConnection { try await $0.query(sql) }
        XCTAssertEqual(before.columns, ["id", "amount"])
        try await admin.withConnection {
            try await $0.execute("alter table layout_items rename column amount to credits")
        }
        let after = try await pool.withConnection { try await $0.query(sql) }
        XCTAssertEqual(after.columns, ["id", "credits"])
        XCTAssertEqual(try after.first?.int64("credits"), 40)
        let gone = await expectPostgresError { try after.first?.int64("amount") }
        XCTAssertEqual(gone?.code, .decodingFailed)
        await pool.close()
        await admin.close()
    }

    /// Past the prepared-statement limit (here 0) every statement runs
    /// unnamed: no layout is lent, so each result reads its own columns,
    /// also for the same text run twice.
    func testUnnamedStatementsReadTheirOwnColumns() async throws {
        let pool = PostgresPool(
            configuration: .init(
                connectionString: try TestDatabase.url(), connectionsMax: 1, preparedStatementsPerConnectionMax: 0))
        let sql = "select $1::bigint as n"
        let (first, second, other) = try await pool.withConnection { connection in
            (
                try await connection.query(sql, [.int64(1)]), try await connection.query(sql, [.int64(2)]),
                try await connection.query("select 3::bigint as m")
            )
        }
        XCTAssertEqual([first.columns, second.columns, other.columns], [["n"], ["n"], ["m"]])
        XCTAssertNotEqual(
            Self.namesStorage(second), Self.namesStorage(first), "nothing remembered for an unnamed statement")
        XCTAssertEqual(try second.first?.int64("n"), 2)
        XCTAssertEqual(try other.first?.int64("m"), 3)
        await pool.close()
    }
}
