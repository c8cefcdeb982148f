import Contracts
import Foundation
@testable import PointsService
import PostgresClient
import XCTest

/// Migration 7 dropped the unique (user_id, event_id): the unique event id
/// alone refuses a repeated event id, for the same user and for any other,
/// in the database itself (SQLSTATE 23505, `points_ledger_event_unique`),
/// and a refused row writes nothing.
final class LedgerEventUniquenessTests: PointsStoreTestCase {
    private static let ledgerInsert = """
        insert into points_ledger (user_id, event_id, change_type, direction, amount, balance_after, biz_type, request_fingerprint)
        values ($1::uuid, $2, 'adjust', 1, 1, 1, 'support', '')
        """

    private static func grant(to user: UUID) -> GrantRequest {
        let transactionId = String(UInt64.random(in: 1_000_000_000_000...9_999_999_999_999_999))
        return GrantRequest(
            eventId: "payment.apple_iap:\(transactionId)", userId: user.uuidString, emailHash: "",
            productCode: "popular_pack", bizId: "apple_iap:\(transactionId)")
    }

    func testARepeatedEventIdIsRefusedForTheSameUserAndForAnother() async throws {
        // Not `newUser()`: the raw row below is outside the store's balance
        // chain, which the test case's tear-down checks for its users.
        let (owner, other) = (UUID(), UUID())
        let eventId = "uniqueness:\(UUID())"
        _ = try await store.grant(Self.grant(to: owner))
        _ = try await store.grant(Self.grant(to: other))
        try await store.pool.withConnection {
            _ = try await $0.query(Self.ledgerInsert, [.uuid(owner), .text(eventId)])
        }
        for user in [owner, other] {
            do {
                try await store.pool.withConnection {
                    _ = try await $0.query(Self.ledgerInsert, [.uuid(user), .text(eventId)])
                }
                XCTFail(
                    "a second ledger row with \(eventId) was accepted for \(user == owner ? "its owner" : "another user")"
                )
            } catch let error as PostgresError {
                XCTAssertEqual(error.sqlState, "23505", "\(error)")
                XCTAssertTrue(error.message.contains("\"points_ledger_event_unique\""), error.message)
            }
        }
        let rows = try await store.pool.withConnection {
            try await $0.query("select user_id::text as user from points_ledger where event_id = $1", [.text(eventId)])
                .map { try $0.string("user") }
        }
        XCTAssertEqual(rows, [owner.uuidString.lowercased()], "only the first row was written")
    }

    func testTheLedgerKeepsOneUniqueIndexOnEventIds() async throws {
        let indexes = try await store.pool.withConnection {
            try await $0.query(
                """
                select indexrelid::regclass::text as name from pg_index
                where indrelid = 'points_ledger'::regclass and indisunique
                  and 'event_id' = any (select attname from pg_attribute
                                        where attrelid = indrelid and attnum = any (indkey::int2[]))
                """
            ).map { try $0.string("name") }
        }
        XCTAssertEqual(indexes, ["points_ledger_event_unique"])
    }

    func testMigrationSevenKeepsTheRowsWrittenBeforeIt() async throws {
        let versionSix = try await PointsSchemaAtVersion.store(version: 6, for: self)
        let user = UUID()
        _ = try await versionSix.grant(Self.grant(to: user))
        let before = try await versionSix.getBalance(userId: user.uuidString)
        try await PointsSchemaAtVersion.migrate(versionSix.pool, upTo: 7)
        let after = try await versionSix.getBalance(userId: user.uuidString)
        XCTAssertEqual(after.balance, before.balance)
        XCTAssertGreaterThan(after.balance, 0)
        let constraints = try await versionSix.pool.withConnection {
            try await $0.query(
                "select conname::text as name from pg_constraint where conrelid = 'points_ledger'::regclass and contype = 'u'"
            )
            .map { try $0.string("name") }.sorted()
        }
        XCTAssertEqual(constraints, ["points_ledger_event_unique", "points_ledger_seq_key"])
    }
}
