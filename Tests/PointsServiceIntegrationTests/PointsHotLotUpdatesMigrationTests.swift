import Foundation
@testable import PointsService
import PostgresClient
import TestSupport
import XCTest

/// Points migration 11 (`hot_lot_updates`): `credit_lots_open` names the
/// stored generated column `open` instead of `remaining`, so a spend's lot
/// update stays on its page (HOT) unless the lot empties. Over rows the
/// store wrote under migration 10 every lot and movement reads as before,
/// `open` is `remaining > 0` on each, both spend functions read `lot.open`,
/// and a lot update that was not HOT before the migration is HOT after it.
final class PointsHotLotUpdatesMigrationTests: XCTestCase {
    func testMigrationElevenOverStoredRowsKeepsEveryLotAndRewritesBothSpendFunctions() async throws {
        let store = try await PointsSchemaAtVersion.store(version: 10, for: self)
        let (owner, other) = (UUID(), UUID())
        try await PointsRowsOfEveryKind.write(store, owner: owner, other: other)
        let before = try await store.pool.withConnection { try await Stored.read($0) }
        XCTAssertGreaterThan(before.lots.count, 2)
        XCTAssertTrue(before.functions.allSatisfy { $0.contains("lot.remaining > 0") && !$0.contains("lot.open") })

        try await PointsSchemaAtVersion.migrate(store.pool, upTo: 11)

        let after = try await store.pool.withConnection { try await Stored.read($0) }
        XCTAssertEqual(after.lots, before.lots, "every lot reads as before")
        XCTAssertEqual(after.movements, before.movements)
        XCTAssertEqual(after.openDisagreements, 0, "open = (remaining > 0) on every stored lot")
        XCTAssertEqual(
            after.openIndex,
            "CREATE INDEX credit_lots_open ON \(after.schemaName).credit_lots USING btree (user_id, seq) WHERE open")
        XCTAssertEqual(after.options, ["fillfactor=80"])
        XCTAssertEqual(after.functions.count, 2)
        for definition in after.functions {
            XCTAssertFalse(definition.contains("lot.remaining > 0"))
            XCTAssertTrue(definition.contains("lot.open"))
            // Nothing else changed: putting the old text back gives the old definition.
            XCTAssertTrue(
                before.functions.contains(definition.replacingOccurrences(of: "lot.open", with: "lot.remaining > 0")))
        }
        try await PointsRowsOfEveryKind.carryOn(store, owner: owner)
        try await PointsTestDatabase.assertInvariants(pool: store.pool, users: [owner, other])
        let carriedOn = try await store.pool.withConnection { try await Stored.read($0) }
        XCTAssertEqual(carriedOn.openDisagreements, 0, "open follows remaining on the lots written after the migration")
    }

    func testALotUpdateThatLeavesTheLotOpenBecomesHeapOnly() async throws {
        let store = try await PointsSchemaAtVersion.store(version: 10, for: self)
        let user = UUID()
        _ = try await store.grant(PointsRowsOfEveryKind.grant(user, "popular_pack"))
        let atTen = try await Self.lotUpdates(spending: 3, of: user, store)
        XCTAssertEqual(atTen.updated, 2)
        XCTAssertEqual(atTen.heapOnly, 0, "the partial index names remaining: every lot update gets new index entries")

        try await PointsSchemaAtVersion.migrate(store.pool, upTo: 11)
        let atEleven = try await Self.lotUpdates(spending: 3, of: user, store)
        XCTAssertEqual(atEleven.updated, 2)
        XCTAssertEqual(atEleven.heapOnly, 2, "the lot stays open: both updates stay on their page")

        let balance = try await store.getBalance(userId: user.uuidString).balance
        let emptied = try await Self.lotUpdates(
            spending: balance / 2, of: user, store, thenTheRest: balance - balance / 2)
        XCTAssertEqual(emptied.updated, 2)
        XCTAssertEqual(emptied.heapOnly, 1, "the update that empties the lot changes open, so it cannot be HOT")
        try await PointsTestDatabase.assertInvariants(pool: store.pool, users: [user])
    }

    func testTheSpendFunctionsFindOpenLotsThroughTheNewIndex() async throws {
        let store = try await PointsSchemaAtVersion.store(version: 11, for: self)
        try await store.pool.withTransaction { transaction in
            try await transaction.execute("set local enable_seqscan = off")
            try await transaction.execute("set local enable_bitmapscan = off")
            let plan = try await transaction.query(
                """
                explain select lot.source_event_id, lot.remaining from credit_lots lot
                where lot.user_id = '\(UUID().uuidString.lowercased())'::uuid and lot.open order by lot.seq
                """
            ).map { try $0.string("QUERY PLAN") }.joined(separator: "\n")
            XCTAssertTrue(plan.contains("Index Scan using credit_lots_open"), plan)
        }
    }

    /// One spend through `points_spend` and one through `points_spend_many`
    /// in a transaction, and how many `credit_lots` updates that
    /// transaction made and how many of them were HOT.
    private static func lotUpdates(
        spending first: Int64, of user: UUID, _ store: PointsStore,
        thenTheRest second: Int64 = 3
    ) async throws -> (updated: Int64, heapOnly: Int64) {
        try await store.pool.withTransaction { transaction in
            // PostgreSQL 15 counts a backend's updates in pg_stat_xact_* until it reports them (at most once a
            // second, between transactions), so the view can hold earlier transactions' too: the difference counts.
            let start = try await counts(transaction)
            let single = try await transaction.query(
                """
                select o_outcome from points_spend($1::uuid, $2, $3::bigint, 'chat', 'session', '', '{}'::jsonb)
                """, [.uuid(user), .text("chat.hot:\(UUID())"), .int64(first)])
            XCTAssertEqual(try single.first?.string("o_outcome"), "applied")
            let spends = """
                [{"user_id": "\(user.uuidString.lowercased())", "event_id": "chat.hot:\(UUID())", "amount": \(second),
                  "biz_type": "chat", "biz_id": "session", "fingerprint": "", "ext": {}}]
                """
            let many = try await transaction.query(
                "select o_outcome from points_spend_many($1::jsonb)", [.json(spends)])
            XCTAssertEqual(try many.first?.string("o_outcome"), "applied")
            let end = try await counts(transaction)
            return (end.updated - start.updated, end.heapOnly - start.heapOnly)
        }
    }

    private static func counts(_ transaction: PostgresConnection) async throws -> (updated: Int64, heapOnly: Int64) {
        let counts = try await transaction.query(
            """
            select n_tup_upd, n_tup_hot_upd from pg_stat_xact_user_tables
            where schemaname = current_schema() and relname = 'credit_lots'
            """)
        return (try counts[0].int64("n_tup_upd"), try counts[0].int64("n_tup_hot_upd"))
    }

    /// What the migration test compares across the migration.
    private struct Stored {
        var schemaName: String
        var lots: [String]
        var movements: [String]
        var openDisagreements: Int64
        var openIndex: String
        var options: [String]
        var functions: [String]

        static func read(_ connection: PostgresConnection) async throws -> Stored {
            let hasOpen =
                try await connection.query(
                    """
                    select count(*) as n from information_schema.columns
                    where table_schema = current_schema() and table_name = 'credit_lots' and column_name = 'open'
                    """)[0].int64("n") == 1
            return Stored(
                schemaName: try await connection.query("select current_schema()::text as name")[0].string("name"),
                lots: try await connection.query(
                    """
                    select (user_id, source_event_id, seq, credited, remaining, spent, created_at)::text as row from credit_lots order by seq
                    """
                ).map { try $0.string("row") },
                movements: try await SchemaSnapshot.rows(
                    "lot_movements", orderedBy: "event_id, source_event_id", connection),
                openDisagreements: hasOpen
                    ? try await connection.query(
                        "select count(*) as n from credit_lots where open is distinct from (remaining > 0)")[0].int64(
                            "n")
                    : -1,
                openIndex: try await connection.query(
                    """
                    select indexdef from pg_indexes where schemaname = current_schema() and indexname = 'credit_lots_open'
                    """)[0].string("indexdef"),
                options: try await connection.query(
                    """
                    select coalesce(array_to_string(reloptions, ','), '') as options from pg_class
                    where oid = (current_schema() || '.credit_lots')::regclass
                    """)[0].string("options").split(separator: ",").map(String.init),
                functions: try await connection.query(
                    """
                    select pg_get_functiondef(p.oid) as definition from pg_proc p
                    where p.pronamespace = current_schema()::regnamespace and p.proname in ('points_spend', 'points_spend_many')
                    order by p.proname
                    """
                ).map { try $0.string("definition") })
        }
    }
}
