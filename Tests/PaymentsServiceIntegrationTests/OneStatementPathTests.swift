import Foundation
@testable import PaymentsService
import PostgresClient
import XCTest

/// The purchase's one-statement paths on the real database
/// (`PaymentsStore+OneStatementPaths`): what they write when their
/// precondition holds, and that they write nothing when it does not, so the
/// caller's row-locked fallback decides exactly as before.
final class OneStatementPathTests: XCTestCase {
    private static let refund = AppleVerdict.revoked(Revocation(type: "REFUND_FULL", percentageMilliunits: nil, revocationReason: 0,
                                                                dateUnixMilliseconds: 1_738_645_700_000))
    private static let signedAt: Int64 = 1_738_645_600_000

    // MARK: Step 1: recordIfNew

    func testAFreshPurchaseIsWrittenClaimedOwingTheGrantAndLeasedToTheCaller() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        guard let word = try await store.recordIfNew(.purchased, signedAtUnixMilliseconds: Self.signedAt, for: payment) else {
            return XCTFail("a transaction seen for the first time is inserted")
        }
        XCTAssertNil(word.before)
        XCTAssertTrue(word.accepted)
        XCTAssertFalse(word.conflict)
        XCTAssertEqual(word.after.state, PurchaseState(verdict: .purchased, verdictSignedAtUnixMilliseconds: Self.signedAt, claimed: true,
                                                       credits: 100, grant: .owed))
        XCTAssertEqual(word.after.status, .verified)
        XCTAssertEqual(word.after.pendingStep, .grant)
        XCTAssertEqual(word.after.userId, payment.claim?.userId)
        XCTAssertEqual(word.after.productCode, "starter_pack")
        XCTAssertEqual(word.after.emailHash, payment.claim?.emailIdentity?.hash)
        XCTAssertEqual(word.after.attemptCount, 0)
        XCTAssertEqual(word.after.createdAtUnixMilliseconds, word.after.updatedAtUnixMilliseconds)
        let row = try await columns(store, payment.transactionId, [
            "status", "pending_action", "grant_state", "claimed", "revoked", "failure_code", "clawback_cycle", "ledger_event_id",
            "last_error", "(next_attempt_at > now() + interval '1 second')", "(owed_since = created_at)"])
        XCTAssertEqual(row, ["verified", "grant", "owed", "true", "false", nil, "0", nil, nil, "true", "true"])
        // Leased to the inserting caller: neither the worker nor another inline runner gets it.
        let due = try await store.claimDue(limit: 1000)
        XCTAssertFalse(due.contains { $0.transactionId == payment.transactionId })
        let inline = try await store.claim(transactionId: payment.transactionId)
        XCTAssertNil(inline)
    }

    func testAFirstSightOfARevokedTransactionIsWrittenRevokedOwingNothing() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        let word = try await store.recordIfNew(Self.refund, signedAtUnixMilliseconds: 1_738_645_700_000, for: payment)
        XCTAssertEqual(word?.after.status, .revoked)
        XCTAssertNil(word?.after.pendingStep)
        XCTAssertEqual(word?.after.state.verdict, Self.refund)
        let row = try await columns(store, payment.transactionId, ["revoked", "revocation_reason", "revocation_type", "next_attempt_at", "owed_since"])
        XCTAssertEqual(row, ["true", "OTHER", "REFUND_FULL", nil, nil])
        // The same as the transaction path writes for the same word.
        let other = PaymentsTestDatabase.newPayment()
        let recorded = try await PaymentsTestDatabase.record(store, other, Self.refund, signedAt: 1_738_645_700_000)
        XCTAssertEqual(recorded.after.state, word?.after.state)
    }

    func testAnExistingRowIsLeftAloneAndTheLockedFallbackAdmitsTheClaim() async throws {
        let store = try await PaymentsTestDatabase.store()
        let user = UUID()
        // Apple's word came first, without an owner (a notification).
        let notified = PaymentsTestDatabase.newPayment(userId: user, claimed: false)
        let first = try await PaymentsTestDatabase.record(store, notified)
        XCTAssertEqual(first.after.status, .received)
        let app = PaymentsTestDatabase.newPayment(userId: user, transactionId: notified.transactionId)
        let skipped = try await store.recordIfNew(.purchased, signedAtUnixMilliseconds: Self.signedAt + 1, for: app)
        XCTAssertNil(skipped, "the row exists: nothing is written")
        let untouched = try await store.find(transactionId: notified.transactionId)
        XCTAssertEqual(untouched, first.after)
        // The fallback, as PaymentProcessor takes it: the locked path, without a second insert.
        let claimed = try await store.pool.withTransaction {
            try await store.record(.purchased, signedAtUnixMilliseconds: Self.signedAt + 1, for: app, in: $0, rowExists: true)
        }
        XCTAssertEqual(claimed.before, first.after)
        XCTAssertEqual(claimed.after.pendingStep, .grant)
        XCTAssertEqual(claimed.after.userId, user)
        // Another user's verify of that transaction: skipped, then a conflict under the lock.
        let stolen = PaymentsTestDatabase.newPayment(transactionId: notified.transactionId)
        let skippedAgain = try await store.recordIfNew(.purchased, signedAtUnixMilliseconds: Self.signedAt + 2, for: stolen)
        XCTAssertNil(skippedAgain)
        let conflict = try await store.pool.withTransaction {
            try await store.record(.purchased, signedAtUnixMilliseconds: Self.signedAt + 2, for: stolen, in: $0, rowExists: true)
        }
        XCTAssertTrue(conflict.conflict)
        let owner = try await store.find(transactionId: notified.transactionId)?.userId
        XCTAssertEqual(owner, user)
    }

    func testParallelFirstSightsOfOneTransactionInsertOnce() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        let inserted = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 {
                group.addTask { try await store.recordIfNew(.purchased, signedAtUnixMilliseconds: Self.signedAt, for: payment) != nil }
            }
            return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        XCTAssertEqual(inserted, 1)
    }

    // MARK: Helpers

    /// `names` of the transaction's row, as text (nil for NULL).
    private func columns(_ store: PaymentsStore, _ transactionId: String, _ names: [String]) async throws -> [String?] {
        let list = names.enumerated().map { "(\($0.element))::text as c\($0.offset)" }.joined(separator: ", ")
        return try await store.pool.withConnection { connection in
            guard let row = try await connection.query("select \(list) from apple_iap_transactions where transaction_id = $1",
                                                       [.text(transactionId)]).first else { return [] }
            return try names.indices.map { try row.optionalString("c\($0)") }
        }
    }
}
