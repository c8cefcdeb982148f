import Foundation
@testable import PaymentsService
import PostgresClient
import TestSupport
import XCTest

/// Payments migration 7 (`check_domains`) over rows the store wrote under
/// migration 6: no table, index or TOAST table rebuilt, every row, default
/// and index as it was, each single-column rule moved to a named domain
/// constraint and every other rule kept, and the store carrying on over the
/// same pool (statements prepared before the migration included).
final class PaymentsCheckDomainsMigrationTests: XCTestCase {
    static let columnDomains = [
        "credits": "credit_amount", "overdue_amount": "credit_amount", "cycle_amount": "credit_amount",
        "cycle_deducted": "credit_amount",
        "quantity": "purchase_quantity", "revocation_percentage": "revocation_milli_percent",
        "clawback_cycle": "clawback_cycle_number",
        "cycle_phase": "clawback_cycle_phase",
    ]

    func testMigrationSevenOverStoredRowsRebuildsNothingAndKeepsEveryRuleByName() async throws {
        let store = try await PaymentsSchemaAtVersion.store(version: 6, for: self)
        let transactionIds = try await PaymentsRowsInEveryState.write(store)
        let before = try await store.pool.withConnection { try await Stored.read($0) }
        var recordsBefore: [PaymentRecord] = []
        for transactionId in transactionIds {
            let record = try await store.find(transactionId: transactionId)
            recordsBefore.append(try XCTUnwrap(record))
        }
        XCTAssertEqual(before.checks.count, 17, "migration 6 leaves 17 CHECKs on apple_iap_transactions")

        // Up to migration 7 only: later migrations may change the schema on purpose.
        try await PaymentsSchemaAtVersion.migrate(store.pool, upTo: 7)

        let after = try await store.pool.withConnection { try await Stored.read($0) }
        XCTAssertEqual(
            after.schema.files, before.schema.files, "no table, index or TOAST table was rewritten or rebuilt")
        XCTAssertEqual(after.schema.indexDefinitions, before.schema.indexDefinitions)
        XCTAssertEqual(after.schema.columnDefaults, before.schema.columnDefaults)
        XCTAssertEqual(after.purchases, before.purchases, "every stored row reads as before")
        XCTAssertEqual(after.answers, before.answers)
        XCTAssertEqual(after.columnDomains, Self.columnDomains)
        XCTAssertEqual(
            after.domainChecks,
            [
                "credit_amount": ["credit_amount_not_negative"], "purchase_quantity": ["purchase_quantity_in_range"],
                "revocation_milli_percent": ["revocation_milli_percent_in_range"],
                "clawback_cycle_number": ["clawback_cycle_number_not_negative"],
                "clawback_cycle_phase": ["clawback_cycle_phase_known"],
            ])
        // The rules on two columns, and the ones on a column a partial index uses, stay table CHECKs under their names.
        XCTAssertEqual(
            after.checks,
            [
                "apple_iap_transactions_check2", "apple_iap_transactions_check3",
                "apple_iap_transactions_claimed_owner",
                "apple_iap_transactions_cycle_phase", "apple_iap_transactions_environment_check",
                "apple_iap_transactions_grant_owed_claimed",
                "apple_iap_transactions_grant_state_check", "apple_iap_transactions_pending_action_check",
                "apple_iap_transactions_status_check",
            ])
        XCTAssertEqual(
            Set(before.checks).subtracting(after.checks).count, Self.columnDomains.count,
            "one table CHECK per moved column")
        XCTAssertEqual(after.answerChecks, before.answerChecks)

        // The store's connection prepared its statements before the
        // migration: the first transaction over one fails once, as a
        // transient outage the saga retries, and writes nothing.
        let owedGrant = transactionIds[0]
        let eventId = LedgerEventId.purchase(transactionId: owedGrant)
        do {
            _ = try await store.complete(.grant, with: .granted(), transactionId: owedGrant, ledgerEventId: eventId)
            XCTFail("a statement prepared before the migration returns a column whose type changed")
        } catch {
            guard case .databaseUnavailable(let detail) = error else {
                return XCTFail("expected a transient error, got \(error)")
            }
            XCTAssertTrue(detail.contains("staleStatement"), detail)
        }
        guard
            case .applied(let granted) = try await store.complete(
                .grant, with: .granted(), transactionId: owedGrant, ledgerEventId: eventId)
        else { return XCTFail("run again, the result applies") }
        XCTAssertEqual(granted.status, .granted)
        var recordsAfter: [PaymentRecord] = []
        for transactionId in transactionIds.dropFirst() {
            let record = try await store.find(transactionId: transactionId)
            recordsAfter.append(try XCTUnwrap(record))
        }
        XCTAssertEqual(
            recordsAfter, Array(recordsBefore.dropFirst()),
            "the store decodes the domain columns as it decoded their base types")

        try await PaymentsRowsInEveryState.carryOn(store, refunded: transactionIds[2])
    }

    /// What the test compares across the migration.
    private struct Stored {
        var schema: SchemaSnapshot
        var purchases: [String]
        var answers: [String]
        var checks: [String]
        var answerChecks: [String]
        var columnDomains: [String: String]
        var domainChecks: [String: [String]]

        static func read(_ connection: PostgresConnection) async throws -> Stored {
            Stored(
                schema: try await SchemaSnapshot.read(connection),
                purchases: try await SchemaSnapshot.rows("apple_iap_transactions", orderedBy: "id", connection),
                answers: try await SchemaSnapshot.rows(
                    "consumption_answers", orderedBy: "notification_uuid", connection),
                checks: try await SchemaSnapshot.tableChecks("apple_iap_transactions", connection),
                answerChecks: try await SchemaSnapshot.tableChecks("consumption_answers", connection),
                columnDomains: try await SchemaSnapshot.columnDomains("apple_iap_transactions", connection),
                domainChecks: try await SchemaSnapshot.domainChecks(connection))
        }
    }
}
