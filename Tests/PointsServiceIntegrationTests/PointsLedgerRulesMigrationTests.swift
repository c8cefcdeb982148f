import Foundation
@testable import PointsService
import PostgresClient
import TestSupport
import XCTest

/// Points migration 10 (`ledger_rules_function`): the ledger's ten row
/// rules become one CHECK calling `points_ledger_rules`. Over rows the store
/// wrote under migration 9 nothing is rebuilt or rewritten and the stored
/// rows still pass; and over every combination of the columns the rules
/// read, the function refuses exactly what the ten CHECKs refused, naming
/// the same constraint (the first broken one by name, as PostgreSQL checks
/// them).
final class PointsLedgerRulesMigrationTests: XCTestCase {
    /// The ten CHECKs on `points_ledger` before migration 10, as
    /// `pg_get_constraintdef` prints them (the first test checks that a
    /// database at version 9 holds exactly these), by name.
    static let tenRules: [(name: String, definition: String)] = [
        (
            "points_ledger_change_type_check",
            """
            CHECK (((change_type)::text = ANY ((ARRAY['register'::character varying, 'consume'::character varying, \
            'consume_reversal'::character varying, 'grant'::character varying, 'adjust'::character varying, \
            'purchase'::character varying, 'refund'::character varying, 'refund_reversal'::character varying])::text[])))
            """
        ),
        (
            "points_ledger_consume_direction",
            "CHECK ((((change_type)::text <> 'consume'::text) OR ((direction)::smallint = '-1'::integer)))"
        ),
        (
            "points_ledger_consume_reversal_direction",
            """
            CHECK ((((change_type)::text <> 'consume_reversal'::text) OR (((direction)::smallint = 1) AND (related_event_id IS NOT NULL))))
            """
        ),
        (
            "points_ledger_payment_biz",
            """
            CHECK ((((change_type)::text <> ALL (ARRAY[('purchase'::character varying)::text, ('refund'::character varying)::text, \
            ('refund_reversal'::character varying)::text])) OR (((biz_type)::text = 'payment'::text) AND (biz_id IS NOT NULL) AND \
            ((biz_id)::text <> ''::text))))
            """
        ),
        (
            "points_ledger_payment_biz_only",
            """
            CHECK ((((biz_type)::text <> 'payment'::text) OR ((change_type)::text = ANY (ARRAY[('purchase'::character varying)::text, \
            ('refund'::character varying)::text, ('refund_reversal'::character varying)::text]))))
            """
        ),
        (
            "points_ledger_purchase_direction",
            "CHECK ((((change_type)::text <> 'purchase'::text) OR ((direction)::smallint = 1)))"
        ),
        (
            "points_ledger_refund_direction",
            "CHECK ((((change_type)::text <> 'refund'::text) OR ((direction)::smallint = '-1'::integer)))"
        ),
        (
            "points_ledger_refund_reversal_direction",
            "CHECK ((((change_type)::text <> 'refund_reversal'::text) OR ((direction)::smallint = 1)))"
        ),
        (
            "points_ledger_related_event",
            """
            CHECK ((((change_type)::text <> ALL ((ARRAY['refund'::character varying, 'refund_reversal'::character varying])::text[])) \
            OR (related_event_id IS NOT NULL)))
            """
        ),
        (
            "points_ledger_support_biz",
            "CHECK ((((biz_type)::text <> 'support'::text) OR ((change_type)::text = 'adjust'::text)))"
        ),
    ]

    func testMigrationTenOverStoredRowsRebuildsNothingAndLeavesOneRuleTheRowsPass() async throws {
        let store = try await PointsSchemaAtVersion.store(version: 9, for: self)
        let (owner, other) = (UUID(), UUID())
        try await PointsRowsOfEveryKind.write(store, owner: owner, other: other)
        let before = try await store.pool.withConnection { try await Stored.read($0) }
        XCTAssertEqual(before.checks.map(\.name), Self.tenRules.map(\.name))
        XCTAssertEqual(
            before.checks.map(\.definition), Self.tenRules.map(\.definition),
            "the rules this test compares the function with")

        try await PointsSchemaAtVersion.migrate(store.pool, upTo: 10)

        let after = try await store.pool.withConnection { try await Stored.read($0) }
        XCTAssertEqual(
            after.schema.files, before.schema.files, "no table, index or TOAST table was rewritten or rebuilt")
        XCTAssertEqual(after.schema.indexDefinitions, before.schema.indexDefinitions)
        XCTAssertEqual(after.ledger, before.ledger, "every ledger row reads as before")
        XCTAssertEqual(after.checks.map(\.name), ["points_ledger_rules"])
        XCTAssertEqual(
            after.checks.map(\.validated), [false], "added NOT VALID: nothing scanned under the table's lock")
        try await store.pool.withConnection { connection in
            // The stored rows pass the new rule too (what an operator's VALIDATE proves).
            try await connection.execute("alter table points_ledger validate constraint points_ledger_rules")
        }
        let validated = try await store.pool.withConnection { try await Stored.read($0) }
        XCTAssertEqual(validated.checks.map(\.validated), [true])
        try await PointsRowsOfEveryKind.carryOn(store, owner: owner)
    }

    func testTheFunctionRefusesExactlyWhatTheTenChecksRefusedByName() async throws {
        let store = try await PointsSchemaAtVersion.store(version: 10, for: self)
        let changeTypes = [
            "register", "consume", "consume_reversal", "grant", "adjust", "purchase", "refund", "refund_reversal",
            "gift",
        ]
        let bizTypes = ["payment", "support", "chat"]
        let optionalTexts: [String?] = [nil, "", "x"]
        var refusals: [String: Int] = [:]
        var accepted = 0
        try await store.pool.withConnection { connection in
            let checks = Self.tenRules.map { "constraint \($0.name) \($0.definition)" }.joined(separator: ",\n")
            try await connection.execute(
                """
                create temporary table ten_rules (change_type varchar(32), direction smallint, biz_type varchar(32),
                                                  biz_id varchar(200), related_event_id varchar(200),
                                                  \(checks))
                """)
            for changeType in changeTypes {
                for direction: Int64 in [1, -1] {
                    for bizType in bizTypes {
                        for bizId in optionalTexts {
                            for related in [nil, "refund.x"] as [String?] {
                                let values: [PostgresValue] = [
                                    .text(changeType), .int64(direction), .text(bizType),
                                    bizId.map(PostgresValue.text) ?? .null, related.map(PostgresValue.text) ?? .null,
                                ]
                                let what =
                                    "\(changeType) \(direction) \(bizType) \(bizId ?? "null") \(related ?? "null")"
                                let byChecks = try await Self.refusal(what, connection) {
                                    try await $0.query(
                                        "insert into ten_rules values ($1, $2::smallint, $3, $4, $5)", values)
                                }
                                let byFunction = try await Self.refusal(what, connection) {
                                    try await $0.query(
                                        "select points_ledger_rules($1, $2::smallint, $3, $4, $5) as ok", values)
                                }
                                XCTAssertEqual(byFunction, byChecks, what)
                                if let byChecks { refusals[byChecks, default: 0] += 1 } else { accepted += 1 }
                            }
                        }
                    }
                }
            }
        }
        XCTAssertEqual(
            Set(refusals.keys), Set(Self.tenRules.map(\.name)),
            "every rule was the first one broken somewhere in the grid")
        XCTAssertGreaterThan(accepted, 0)
    }

    func testTheLedgerRefusesABrokenRowByTheRulesNameAndWritesNothing() async throws {
        let store = try await PointsSchemaAtVersion.store(version: 10, for: self)
        let user = UUID()
        _ = try await store.grant(PointsRowsOfEveryKind.grant(user, "popular_pack"))
        try await store.pool.withConnection { connection in
            let before = try await connection.query("select count(*) as n from points_ledger").first!.int64("n")
            let insert = """
                insert into points_ledger (user_id, event_id, change_type, direction, amount, balance_after, biz_type, request_fingerprint)
                values ($1::uuid, $2, 'consume', 1, 1, 1, 'chat', '')
                """
            let refusal = try await Self.refusal("consume with direction 1", connection) {
                try await $0.query(insert, [.uuid(user), .text("chat.rules:\(UUID())")])
            }
            XCTAssertEqual(refusal, "points_ledger_consume_direction")
            let update = try await Self.refusal("a purchase turned negative", connection) {
                try await $0.query("update points_ledger set direction = -1 where user_id = $1::uuid", [.uuid(user)])
            }
            XCTAssertEqual(update, "points_ledger_purchase_direction")
            let after = try await connection.query("select count(*) as n from points_ledger").first!.int64("n")
            XCTAssertEqual(after, before)
        }
    }

    /// The constraint a check_violation names, or nil when `statement` succeeds; any other error fails the test.
    static func refusal<Result>(
        _ what: String, _ connection: PostgresConnection,
        _ statement: (PostgresConnection) async throws -> Result
    ) async throws -> String? {
        do {
            _ = try await statement(connection)
            return nil
        } catch let error as PostgresError {
            XCTAssertEqual(error.sqlState, "23514", "\(what): \(error)")
            guard let range = error.message.range(of: "violates check constraint \"") else {
                XCTFail("\(what): \(error.message)")
                return "?"
            }
            return String(error.message[range.upperBound...].prefix { $0 != "\"" })
        }
    }

    /// What the migration test compares across the migration.
    private struct Stored {
        var schema: SchemaSnapshot
        var ledger: [String]
        var checks: [SchemaSnapshot.TableCheck]

        static func read(_ connection: PostgresConnection) async throws -> Stored {
            return Stored(
                schema: try await SchemaSnapshot.read(connection),
                ledger: try await SchemaSnapshot.rows("points_ledger", orderedBy: "seq", connection),
                checks: try await SchemaSnapshot.tableCheckDefinitions("points_ledger", connection))
        }
    }
}
