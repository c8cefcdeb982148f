import Contracts
import Foundation
@testable import PointsService
import PostgresClient
import TestSupport
import XCTest

/// Points migration 6 (`check_domains`) over rows the store wrote under
/// migration 5 (purchases, a starter pack's claim, spends through
/// `points_spend` and their reversal, adjustments, a clawback and its
/// reversal): no table, index or TOAST table rebuilt, every row, default
/// and index as it was, each single-column rule moved to a named domain
/// constraint and every other rule kept, and the store carrying on over the
/// same connection, `points_spend` included, with the ledger's invariants.
final class PointsCheckDomainsMigrationTests: XCTestCase {
    static let columnDomains: [String: [String: String]] = [
        "user_points": [
            "balance": "credit_amount", "lifetime_earned": "credit_amount", "lifetime_spent": "credit_amount",
        ],
        "points_ledger": [
            "event_id": "ledger_event_id", "direction": "ledger_direction", "amount": "credit_amount",
            "balance_after": "credit_amount", "biz_type": "ledger_biz_type",
        ],
        "credit_lots": ["credited": "credit_amount", "spent": "credit_amount"],
        "lot_movements": ["amount": "moved_credit_amount"],
        "register_bonus_claims": ["email_hash": "email_hash_hex"],
    ]
    /// The tables and the key that orders their rows.
    static let tables = [
        "user_points": "user_id", "points_ledger": "seq", "credit_lots": "seq",
        "lot_movements": "event_id, source_event_id", "register_bonus_claims": "email_hash",
    ]

    func testMigrationSixOverStoredRowsRebuildsNothingAndKeepsEveryRuleByName() async throws {
        let store = try await PointsSchemaAtVersion.store(version: 5, for: self)
        let (owner, other) = (UUID(), UUID())
        try await PointsRowsOfEveryKind.write(store, owner: owner, other: other)
        let before = try await store.pool.withConnection { try await Stored.read($0) }
        let balanceBefore = try await store.getBalance(userId: owner.uuidString)
        XCTAssertEqual(before.checks.values.map(\.count).reduce(0, +), 24, "migration 5 leaves 24 table CHECKs")

        // Up to migration 6 only: later migrations may change the schema on purpose.
        try await PointsSchemaAtVersion.migrate(store.pool, upTo: 6)

        let after = try await store.pool.withConnection { try await Stored.read($0) }
        XCTAssertEqual(
            after.schema.files, before.schema.files, "no table, index or TOAST table was rewritten or rebuilt")
        XCTAssertEqual(after.schema.indexDefinitions, before.schema.indexDefinitions)
        XCTAssertEqual(after.schema.columnDefaults, before.schema.columnDefaults)
        XCTAssertEqual(after.rows, before.rows, "every stored row reads as before")
        XCTAssertEqual(after.columnDomains, Self.columnDomains)
        XCTAssertEqual(
            after.domainChecks,
            [
                "credit_amount": ["credit_amount_not_negative"],
                "moved_credit_amount": ["moved_credit_amount_positive"],
                "ledger_event_id": ["ledger_event_id_not_empty"],
                "ledger_direction": ["ledger_direction_plus_or_minus_one"],
                "ledger_biz_type": ["ledger_biz_type_format"], "email_hash_hex": ["email_hash_hex_format"],
            ])
        // The rules on two columns, and the ones on a column a partial index uses, stay table CHECKs under their names.
        XCTAssertEqual(
            after.checks,
            [
                "user_points": [], "lot_movements": [], "register_bonus_claims": [],
                "points_ledger": [
                    "points_ledger_change_type_check", "points_ledger_consume_direction",
                    "points_ledger_consume_reversal_direction",
                    "points_ledger_payment_biz", "points_ledger_payment_biz_only", "points_ledger_purchase_direction",
                    "points_ledger_refund_direction", "points_ledger_refund_reversal_direction",
                    "points_ledger_related_event",
                    "points_ledger_support_biz",
                ],
                "credit_lots": ["credit_lots_check", "credit_lots_remaining_check"],
            ])
        let moved = Self.columnDomains.values.map(\.count).reduce(0, +)
        XCTAssertEqual(
            before.checks.values.map(\.count).reduce(0, +) - after.checks.values.map(\.count).reduce(0, +), moved,
            "one table CHECK per moved column")

        // The first call runs a transaction over statements prepared before
        // the migration: the store runs it again with fresh ones, unseen by its caller.
        let adjusted = try await store.adjust(
            AdjustCommand(
                userId: owner.uuidString, amount: -1, reason: "after the migration",
                operatorName: "tests"))
        XCTAssertEqual(adjusted.balanceBefore, balanceBefore.balance)
        let balanceAfter = try await store.getBalance(userId: owner.uuidString)
        XCTAssertEqual(
            balanceAfter,
            PointsBalance(
                userId: owner, balance: balanceBefore.balance - 1,
                lifetimeEarned: balanceBefore.lifetimeEarned - 1, lifetimeSpent: balanceBefore.lifetimeSpent))

        try await PointsRowsOfEveryKind.carryOn(store, owner: owner)
        try await PointsTestDatabase.assertInvariants(pool: store.pool, users: [owner, other])
    }

    /// A starter pack (its email identity's claim) and a popular pack for
    /// `owner`, spent from (`points_spend`) and given back, adjusted up and
    /// down, the popular pack clawed back in part and reversed; a pack spent
    /// down to nothing for `other`.
    /// What the test compares across the migration.
    private struct Stored {
        var schema: SchemaSnapshot
        var rows: [String: [String]]
        var checks: [String: [String]]
        var columnDomains: [String: [String: String]]
        var domainChecks: [String: [String]]

        static func read(_ connection: PostgresConnection) async throws -> Stored {
            var stored = Stored(
                schema: try await SchemaSnapshot.read(connection), rows: [:], checks: [:], columnDomains: [:],
                domainChecks: try await SchemaSnapshot.domainChecks(connection))
            for (table, key) in PointsCheckDomainsMigrationTests.tables {
                stored.rows[table] = try await SchemaSnapshot.rows(table, orderedBy: key, connection)
                stored.checks[table] = try await SchemaSnapshot.tableChecks(table, connection)
                let domains = try await SchemaSnapshot.columnDomains(table, connection)
                if !domains.isEmpty { stored.columnDomains[table] = domains }
            }
            return stored
        }
    }
}
