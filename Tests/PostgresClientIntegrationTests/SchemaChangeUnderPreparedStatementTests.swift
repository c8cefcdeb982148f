import PostgresClient
import XCTest

/// A migration that changes the type of a column a prepared statement
/// returns (here: to a domain type, as the check-domain migrations do) makes
/// PostgreSQL refuse that stored statement on every later use ("cached plan
/// must not change result type", SQLSTATE 0A000). The connection must
/// prepare it afresh instead of failing until it is closed.
final class SchemaChangeUnderPreparedStatementTests: XCTestCase {
    private static let read = "select amount from schema_change_items where id = $1::bigint"
    private static let largest = "select id, amount from schema_change_items order by amount desc limit 1"

    /// Two pools on one fresh schema: `pool` holds the prepared statement, `admin` migrates under it.
    private func pools() async throws -> (pool: PostgresPool, admin: PostgresPool) {
        let schema = TestDatabase.freshSchemaName()
        let admin = try await TestDatabase.pool(connectionsMax: 1, schema: schema)
        try await admin.withConnection { connection in
            try await connection.execute(
                """
                create table schema_change_items (id bigint primary key, amount bigint not null);
                insert into schema_change_items values (1, 40), (2, 2);
                """)
        }
        return (try await TestDatabase.pool(connectionsMax: 1, schema: schema), admin)
    }

    private func moveAmountToADomain(_ admin: PostgresPool) async throws {
        try await admin.withConnection { connection in
            try await connection.execute(
                """
                create domain item_amount as bigint;
                alter table schema_change_items alter column amount type item_amount;
                """)
        }
    }

    private func preparedCopies(_ pool: PostgresPool) async throws -> Int64 {
        try await pool.withConnection { connection in
            try await connection.query(
                "select count(*) as n from pg_prepared_statements where statement = $1::text",
                [.text(Self.read)]
            ).first!.int64("n")
        }
    }

    func testAnAutocommittedStatementIsPreparedAgainAndAnswers() async throws {
        let (pool, admin) = try await pools()
        let before = try await pool.withConnection { try await $0.query(Self.read, [.int64(1)]).first!.int64("amount") }
        XCTAssertEqual(before, 40)
        try await moveAmountToADomain(admin)
        let after = try await pool.withConnection { try await $0.query(Self.read, [.int64(2)]).first!.int64("amount") }
        XCTAssertEqual(after, 2)
        let copies = try await preparedCopies(pool)
        XCTAssertEqual(copies, 1, "the stale statement is deallocated, the fresh one kept")
        await pool.close()
        await admin.close()
    }

    /// Every statement of the connection is forgotten at once: a
    /// transaction that runs two statements prepared before the change
    /// fails once, not once per statement.
    func testInsideATransactionTheCallerSeesOneRetryableErrorThenEveryStatementIsFresh() async throws {
        let (pool, admin) = try await pools()
        _ = try await pool.withConnection { connection in
            try await connection.query(Self.read, [.int64(1)])
            try await connection.query(Self.largest, [])
        }
        try await moveAmountToADomain(admin)
        let refused = await expectPostgresError {
            try await pool.withTransaction { try await $0.query(Self.read, [.int64(1)]) }
        }
        XCTAssertEqual(refused?.code, .staleStatement, "the transaction may run again")
        XCTAssertEqual(refused?.sqlState, "0A000")
        XCTAssertEqual(refused?.isConnectionLoss, false, "the connection stays: only its statements were stale")
        let again = try await pool.withTransaction { connection in
            (
                try await connection.query(Self.read, [.int64(1)]).first!.int64("amount"),
                try await connection.query(Self.largest, []).first!.int64("amount")
            )
        }
        XCTAssertEqual(again.0, 40)
        XCTAssertEqual(again.1, 40)
        let copies = try await preparedCopies(pool)
        XCTAssertEqual(copies, 1)
        let open = await pool.statistics.openConnections
        XCTAssertEqual(open, 1)
        await pool.close()
        await admin.close()
    }
}
