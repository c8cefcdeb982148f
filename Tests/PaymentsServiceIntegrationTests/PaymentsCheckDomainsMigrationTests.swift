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
    private static let proratedRefund = AppleVerdict.revoked(Revocation(
        type: Revocation.prorated, percentageMilliunits: 50_000, revocationReason: 1, dateUnixMilliseconds: 1_738_645_700_000))

    static let columnDomains = [
        "credits": "credit_amount", "overdue_amount": "credit_amount", "cycle_amount": "credit_amount", "cycle_deducted": "credit_amount",
        "quantity": "purchase_quantity", "revocation_percentage": "revocation_milli_percent", "clawback_cycle": "clawback_cycle_number",
        "cycle_phase": "clawback_cycle_phase",
    ]

    func testMigrationSevenOverStoredRowsRebuildsNothingAndKeepsEveryRuleByName() async throws {
        let store = try await PaymentsSchemaAtVersion.store(version: 6, for: self)
        let transactionIds = try await writeEveryState(store)
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
        XCTAssertEqual(after.schema.files, before.schema.files, "no table, index or TOAST table was rewritten or rebuilt")
        XCTAssertEqual(after.schema.indexDefinitions, before.schema.indexDefinitions)
        XCTAssertEqual(after.schema.columnDefaults, before.schema.columnDefaults)
        XCTAssertEqual(after.purchases, before.purchases, "every stored row reads as before")
        XCTAssertEqual(after.answers, before.answers)
        XCTAssertEqual(after.columnDomains, Self.columnDomains)
        XCTAssertEqual(after.domainChecks, [
            "credit_amount": ["credit_amount_not_negative"], "purchase_quantity": ["purchase_quantity_in_range"],
            "revocation_milli_percent": ["revocation_milli_percent_in_range"],
            "clawback_cycle_number": ["clawback_cycle_number_not_negative"], "clawback_cycle_phase": ["clawback_cycle_phase_known"],
        ])
        // The rules on two columns, and the ones on a column a partial index uses, stay table CHECKs under their names.
        XCTAssertEqual(after.checks, [
            "apple_iap_transactions_check2", "apple_iap_transactions_check3", "apple_iap_transactions_claimed_owner",
            "apple_iap_transactions_cycle_phase", "apple_iap_transactions_environment_check", "apple_iap_transactions_grant_owed_claimed",
            "apple_iap_transactions_grant_state_check", "apple_iap_transactions_pending_action_check", "apple_iap_transactions_status_check",
        ])
        XCTAssertEqual(Set(before.checks).subtracting(after.checks).count, Self.columnDomains.count, "one table CHECK per moved column")
        XCTAssertEqual(after.answerChecks, before.answerChecks)

        // The store's connection prepared its statements before the
        // migration: the first transaction over one fails once, as a
        // transient outage the saga retries, and writes nothing.
        let owedGrant = transactionIds[0]
        let eventId = LedgerEventId.purchase(transactionId: owedGrant)
        do {
            _ = try await store.complete(.grant, with: .granted, transactionId: owedGrant, ledgerEventId: eventId)
            XCTFail("a statement prepared before the migration returns a column whose type changed")
        } catch {
            guard case .databaseUnavailable(let detail) = error else { return XCTFail("expected a transient error, got \(error)") }
            XCTAssertTrue(detail.contains("staleStatement"), detail)
        }
        guard case .applied(let granted) = try await store.complete(.grant, with: .granted, transactionId: owedGrant, ledgerEventId: eventId)
        else { return XCTFail("run again, the result applies") }
        XCTAssertEqual(granted.status, .granted)
        var recordsAfter: [PaymentRecord] = []
        for transactionId in transactionIds.dropFirst() {
            let record = try await store.find(transactionId: transactionId)
            recordsAfter.append(try XCTUnwrap(record))
        }
        XCTAssertEqual(recordsAfter, Array(recordsBefore.dropFirst()), "the store decodes the domain columns as it decoded their base types")

        try await carryOn(store, refunded: transactionIds[2])
    }

    /// Purchases in each state the saga leaves, and an owed consumption
    /// answer, written by the store; their transaction ids (the first owes
    /// its grant, the third is clawed back in part with an overdue rest).
    private func writeEveryState(_ store: PaymentsStore) async throws -> [String] {
        let signedAt: Int64 = 1_738_645_600_000
        let owed = PaymentsTestDatabase.newPayment()
        _ = try await store.recordIfNew(.purchased, signedAtUnixMilliseconds: signedAt, for: owed)

        let granted = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, granted)
        _ = try await store.complete(.grant, with: .granted, transactionId: granted.transactionId,
                                     ledgerEventId: LedgerEventId.purchase(transactionId: granted.transactionId))

        let refunded = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, refunded)
        _ = try await store.complete(.grant, with: .granted, transactionId: refunded.transactionId)
        let word = try await PaymentsTestDatabase.record(store, PaymentsTestDatabase.newPayment(transactionId: refunded.transactionId, claimed: false),
                                                         Self.proratedRefund, signedAt: 1_738_645_700_000)
        let clawback = try XCTUnwrap(word.after.pendingStep)
        let clawedBack = try await store.complete(clawback, with: .clawedBack(deducted: 30, overdue: 20), transactionId: refunded.transactionId)
        guard case .applied(let record) = clawedBack, record.status == .refundedInsufficient else {
            throw Unexpected(what: "the clawback's result: \(clawedBack)")
        }

        let revokedFirst = PaymentsTestDatabase.newPayment(claimed: false)
        _ = try await store.recordIfNew(Self.proratedRefund, signedAtUnixMilliseconds: 1_738_645_700_000, for: revokedFirst)

        let refused = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, refused)
        _ = try await store.complete(.grant, with: .grantRefused(reason: "STARTER_PACK_INELIGIBLE"), transactionId: refused.transactionId)

        var twoPacks = PaymentsTestDatabase.newPayment(productCode: "popular_pack")
        twoPacks.quantity = 2
        try await PaymentsTestDatabase.record(store, twoPacks)

        try await store.pool.withTransaction {
            try await store.oweConsumptionAnswer(notificationUUID: UUID(), transactionId: refunded.transactionId, environment: "Sandbox",
                                                 requestedAtUnixMilliseconds: 1_738_645_800_000, in: $0)
        }
        return [owed, granted, refunded, revokedFirst, refused, twoPacks].map(\.transactionId)
    }

    /// The saga goes on after the migration: a new purchase (step 1's
    /// insert) and its grant's result (step 3's guarded update), Apple
    /// reversing the refund and the reversal's result.
    private func carryOn(_ store: PaymentsStore, refunded: String) async throws {
        let payment = PaymentsTestDatabase.newPayment()
        let fresh = try await store.recordIfNew(.purchased, signedAtUnixMilliseconds: 1_738_645_600_000, for: payment)
        let owed = try XCTUnwrap(fresh?.after)
        XCTAssertEqual(owed.pendingStep, .grant)
        let granted = try await store.completeIfUnchanged(.grant, with: .granted, over: owed,
                                                          ledgerEventId: LedgerEventId.purchase(transactionId: payment.transactionId))
        XCTAssertEqual(granted?.status, .granted)
        let reversal = try await PaymentsTestDatabase.record(store, PaymentsTestDatabase.newPayment(transactionId: refunded, claimed: false),
                                                             .purchased, signedAt: 1_738_645_900_000)
        let step = try XCTUnwrap(reversal.after.pendingStep)
        guard case .applied(let reversed) = try await store.complete(step, with: .reversed, transactionId: refunded) else {
            return XCTFail("the reversal's result must apply")
        }
        XCTAssertEqual(reversed.status, .granted)
        XCTAssertEqual(reversed.state.cycle?.phase, .reversed)
    }

    private struct Unexpected: Error {
        var what: String
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
            Stored(schema: try await SchemaSnapshot.read(connection),
                   purchases: try await SchemaSnapshot.rows("apple_iap_transactions", orderedBy: "id", connection),
                   answers: try await SchemaSnapshot.rows("consumption_answers", orderedBy: "notification_uuid", connection),
                   checks: try await SchemaSnapshot.tableChecks("apple_iap_transactions", connection),
                   answerChecks: try await SchemaSnapshot.tableChecks("consumption_answers", connection),
                   columnDomains: try await SchemaSnapshot.columnDomains("apple_iap_transactions", connection),
                   domainChecks: try await SchemaSnapshot.domainChecks(connection))
        }
    }
}
