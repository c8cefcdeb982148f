import Foundation
@testable import PointsService
import PostgresClient
import TestSupport
import XCTest

/// Points migration 12 (`refund_settlements`): `points_ledger_rules` gains
/// the change type `refund_settlement` (a spend reversal paying a refund's
/// overdue). Over rows the store wrote under migration 11 nothing is
/// rebuilt or rewritten and the stored rows still pass; every other row is
/// judged exactly as before, and a settlement row by its own rules.
final class PointsRefundSettlementsMigrationTests: XCTestCase {
    func testMigrationTwelveOverStoredRowsRebuildsNothingAndTheRowsStillPass() async throws {
        let store = try await PointsSchemaAtVersion.store(version: 11, for: self)
        let (owner, other) = (UUID(), UUID())
        try await PointsRowsOfEveryKind.write(store, owner: owner, other: other)
        let before = try await store.pool.withConnection { try await SchemaSnapshot.read($0) }
        let rowsBefore = try await store.pool.withConnection {
            try await SchemaSnapshot.rows("points_ledger", orderedBy: "seq", $0)
        }

        try await PointsSchemaAtVersion.migrate(store.pool, upTo: 12)

        let after = try await store.pool.withConnection { try await SchemaSnapshot.read($0) }
        XCTAssertEqual(after.files, before.files, "no table, index or TOAST table was rewritten or rebuilt")
        XCTAssertEqual(after.indexDefinitions, before.indexDefinitions)
        let rowsAfter = try await store.pool.withConnection {
            try await SchemaSnapshot.rows("points_ledger", orderedBy: "seq", $0)
        }
        XCTAssertEqual(rowsAfter, rowsBefore, "every ledger row reads as before")
        try await store.pool.withConnection { connection in
            try await connection.execute("alter table points_ledger validate constraint points_ledger_rules")
        }
        try await PointsRowsOfEveryKind.carryOn(store, owner: owner)

        // A settlement after the migration: buy 100, spend 80, refund, give the spend back.
        let user = UUID()
        let purchase = PointsRowsOfEveryKind.grant(user, "starter_pack")
        _ = try await store.grant(purchase)
        let spend = try await store.spend(
            SpendCommand(
                eventId: "chat.settle:\(UUID().uuidString)", userId: user.uuidString, amount: 80,
                bizType: "chat"))
        _ = try await store.clawback(
            ClawbackCommand(
                eventId: "refund." + purchase.eventId, userId: user.uuidString,
                originalEventId: purchase.eventId, bizId: purchase.bizId, reason: "OTHER"))
        let reversed = try await store.reverseSpend(
            ReverseSpendCommand(
                eventId: "chat.settle.undo:\(UUID().uuidString)", userId: user.uuidString,
                spendEventId: spend.eventId))
        XCTAssertEqual([reversed.creditsRestored, reversed.overdueSettled, reversed.balance], [0, 80, 0])
        try await PointsTestDatabase.assertInvariants(pool: store.pool, users: [owner, other, user])
    }

    func testEveryOtherRowIsJudgedAsBeforeAndASettlementByItsOwnRules() async throws {
        let store = try await PointsSchemaAtVersion.store(version: 11, for: self)
        let atEleven = try await store.pool.withConnection { try await Self.verdicts($0) }
        try await PointsSchemaAtVersion.migrate(store.pool, upTo: 12)
        let atTwelve = try await store.pool.withConnection { try await Self.verdicts($0) }
        XCTAssertEqual(atTwelve.count, atEleven.count)
        var acceptedSettlements: [String] = []
        for (row, verdict) in atTwelve.sorted(by: { $0.key < $1.key }) {
            guard row.hasPrefix("refund_settlement ") else {
                XCTAssertEqual(verdict, atEleven[row] ?? "?", row)
                continue
            }
            XCTAssertEqual(atEleven[row], "points_ledger_change_type_check", row)
            if verdict == nil { acceptedSettlements.append(row) }
        }
        XCTAssertEqual(
            acceptedSettlements, ["refund_settlement -1 payment x refund.x"],
            "direction -1, biz_type payment with a biz_id, and the clawback it pays")
        XCTAssertEqual(atTwelve["refund_settlement 1 payment x refund.x"], "points_ledger_refund_settlement_direction")
        XCTAssertEqual(atTwelve["refund_settlement -1 payment x null"], "points_ledger_related_event")
        XCTAssertEqual(atTwelve["refund_settlement -1 payment  refund.x"], "points_ledger_payment_biz")
        XCTAssertEqual(atTwelve["refund_settlement -1 chat x refund.x"], "points_ledger_payment_biz")
    }

    /// The rule `points_ledger_rules` names for each combination of the
    /// columns it reads (nil: accepted), keyed by the combination.
    private static func verdicts(_ connection: PostgresConnection) async throws -> [String: String?] {
        let changeTypes = [
            "register", "consume", "consume_reversal", "grant", "adjust", "purchase", "refund", "refund_reversal",
            "refund_settlement", "gift",
        ]
        var verdicts: [String: String?] = [:]
        for changeType in changeTypes {
            for direction: Int64 in [1, -1] {
                for bizType in ["payment", "support", "chat"] {
                    for bizId in [nil, "", "x"] as [String?] {
                        for related in [nil, "refund.x"] as [String?] {
                            let values: [PostgresValue] = [
                                .text(changeType), .int64(direction), .text(bizType),
                                bizId.map(PostgresValue.text) ?? .null, related.map(PostgresValue.text) ?? .null,
                            ]
                            let what = "\(changeType) \(direction) \(bizType) \(bizId ?? "null") \(related ?? "null")"
                            verdicts[what] = try await PointsLedgerRulesMigrationTests.refusal(what, connection) {
                                try await $0.query(
                                    "select points_ledger_rules($1, $2::smallint, $3, $4, $5) as ok", values)
                            }
                        }
                    }
                }
            }
        }
        return verdicts
    }
}
