import Foundation
import PostgresClient
import XCTest

final class PostgresMigratorTests: XCTestCase {
    private let migrations = [
        PostgresMigration(
            version: 1, name: "create_widgets", sql: "create table widgets (id bigint primary key, name text not null)"),
        PostgresMigration(
            version: 2, name: "widget_color",
            sql: "alter table widgets add column color text; create index widgets_color on widgets (color)"),
    ]

    func testMigrationsApplyInOrderOnceAndAreIdempotent() async throws {
        let pool = try await TestDatabase.pool()
        let migrator = PostgresMigrator(migrations: migrations, advisoryLockKey: Int64.random(in: 1...Int64.max))
        let first = try await migrator.migrate(on: pool)
        XCTAssertEqual(first, [1, 2])
        let second = try await migrator.migrate(on: pool)
        XCTAssertEqual(second, [])
        let recorded = try await pool.withConnection { connection in
            try await connection.query("select version, name, checksum from schema_migrations order by version")
                .map { "\(try $0.int64("version")):\(try $0.string("name")):\(try $0.string("checksum").count)" }
        }
        XCTAssertEqual(recorded, ["1:create_widgets:32", "2:widget_color:32"])
        try await pool.withConnection {
            try await $0.query("insert into widgets (id, name, color) values (1, 'a', 'red')")
        }
    }

    func testTwoConcurrentRunnersApplyEachMigrationOnce() async throws {
        let schema = TestDatabase.freshSchemaName()
        let poolA = try await TestDatabase.pool(schema: schema)
        let poolB = try await TestDatabase.pool(schema: schema)
        let migrator = PostgresMigrator(migrations: migrations, advisoryLockKey: Int64.random(in: 1...Int64.max))
        async let appliedA = migrator.migrate(on: poolA)
        async let appliedB = migrator.migrate(on: poolB)
        let results = try await [appliedA, appliedB]
        XCTAssertEqual(results.flatMap { $0 }.sorted(), [1, 2], "each version is applied by exactly one runner")
        let count = try await poolA.withConnection {
            try await $0.query("select count(*) as c from schema_migrations").first!.int64("c")
        }
        XCTAssertEqual(count, 2)
    }

    func testChangedMigrationTextIsRefused() async throws {
        let pool = try await TestDatabase.pool()
        try await PostgresMigrator(migrations: migrations).migrate(on: pool)
        let drifted = [
            migrations[0],
            PostgresMigration(version: 2, name: "widget_color", sql: "alter table widgets add column colour text"),
        ]
        let error = await expectPostgresError { try await PostgresMigrator(migrations: drifted).migrate(on: pool) }
        XCTAssertEqual(error?.code, .migrationChecksumMismatch)
    }

    func testFailingMigrationLeavesNothingBehind() async throws {
        let pool = try await TestDatabase.pool()
        let broken =
            migrations + [
                PostgresMigration(
                    version: 3, name: "broken", sql: "create table t3 (x int); select * from missing_table")
            ]
        let error = await expectPostgresError { try await PostgresMigrator(migrations: broken).migrate(on: pool) }
        XCTAssertEqual(error?.sqlState, "42P01")
        let exists = try await pool.withConnection { connection in
            try await connection.query("select to_regclass('widgets') is not null as present").first!.bool("present")
        }
        XCTAssertFalse(exists, "all migrations of a run commit together or not at all")
    }
}
