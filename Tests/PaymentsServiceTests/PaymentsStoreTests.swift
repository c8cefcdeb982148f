import Foundation
@testable import PaymentsService
import PostgresClient
import XCTest

/// The storage edge on the real database: step 1 races, row-locked
/// transitions, worker claims with leases, notifications recorded once.
final class PaymentsStoreTests: XCTestCase {
    func testInsertVerifiedRecordsAnOwedGrantAndARepeatSeesTheRow() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        guard case .inserted(let first) = try await store.insertVerified(payment) else { return XCTFail("expected insert") }
        XCTAssertEqual(first.state, .newlyVerified)
        XCTAssertEqual(first.userId, payment.userId)
        XCTAssertEqual(first.purchaseDateUnixMilliseconds, 1_738_645_560_000)
        guard case .existing(let again) = try await store.insertVerified(payment) else { return XCTFail("expected existing") }
        XCTAssertEqual(again.id, first.id)
    }

    func testParallelInsertsOfOneTransactionCreateOneRow() async throws {
        let store = try await PaymentsTestDatabase.store()
        let transactionId = PaymentsTestDatabase.randomTransactionId()
        let userA = UUID(), userB = UUID()
        let outcomes = try await withThrowingTaskGroup(of: PaymentsStore.InsertOutcome.self) { group in
            for index in 0..<50 {
                group.addTask { try await store.insertVerified(PaymentsTestDatabase.newPayment(userId: index % 2 == 0 ? userA : userB, transactionId: transactionId)) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let inserted = outcomes.filter { if case .inserted = $0 { true } else { false } }
        XCTAssertEqual(inserted.count, 1)
        let count = try await store.pool.withConnection {
            try await $0.query("select count(*) as n from apple_iap_transactions where transaction_id = $1", [.text(transactionId)]).first!.int64("n")
        }
        XCTAssertEqual(count, 1)
    }

    func testGrantStepMarksGrantedAndClearsTheSchedule() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        _ = try await store.insertVerified(payment)
        let eventId = LedgerEventId.purchase(transactionId: payment.transactionId)
        let granted = try await store.apply(.init(transition: { PaymentSaga.afterGrant($0, outcome: .credited) }, ledgerEventId: eventId),
                                            transactionId: payment.transactionId)
        XCTAssertEqual(granted.state, PaymentState(status: .granted))
        XCTAssertEqual(granted.ledgerEventId, eventId)
        let due = try await nextAttempt(store, payment.transactionId)
        XCTAssertNil(due)
    }

    func testTransientFailureBacksOffAndTheWorkerClaimsItWhenDue() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        _ = try await store.insertVerified(payment)
        // Leased to the inserting caller: not claimable yet.
        let early = try await store.claimDue(limit: 1000)
        XCTAssertFalse(early.contains { $0.transactionId == payment.transactionId })
        let failed = try await store.apply(.init(transition: { PaymentSaga.afterGrant($0, outcome: .transientFailure) }, transientError: "points unavailable"),
                                           transactionId: payment.transactionId)
        XCTAssertEqual(failed.state, .newlyVerified)
        XCTAssertEqual(failed.lastError, "points unavailable")
        // Backoff here is at most 1 s; poll until the worker can claim it.
        var claimed: PaymentRecord?
        for _ in 0..<60 where claimed == nil {
            claimed = try await store.claimDue(limit: 1000).first { $0.transactionId == payment.transactionId }
            if claimed == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        XCTAssertEqual(claimed?.attemptCount, 1)
        // Claimed means leased: a second worker does not get it.
        let second = try await store.claimDue(limit: 1000)
        XCTAssertFalse(second.contains { $0.transactionId == payment.transactionId })
    }

    func testNotificationIsRecordedOnceAndAppliesItsEffectInTheSameTransaction() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        _ = try await store.insertVerified(payment)
        _ = try await store.apply(.init(transition: { PaymentSaga.afterGrant($0, outcome: .credited) }, ledgerEventId: LedgerEventId.purchase(transactionId: payment.transactionId)), transactionId: payment.transactionId)
        let notification = NotificationRecord(notificationUUID: UUID(), notificationType: "REFUND", subtype: nil, environment: "Sandbox",
                                              transactionId: payment.transactionId, signedDateUnixMilliseconds: 1_700_000_000_000, payloadJSON: "{}")
        let first = try await store.recordNotification(notification, effect: { current, connection in
            try await store.write(.init(transition: PaymentSaga.afterRefundNotice), over: current!, in: connection)
        }, outcome: { before, after in
            before?.state.pendingAction == nil && after?.state.pendingAction == .clawback ? "clawback_scheduled" : "unexpected"
        })
        XCTAssertEqual(first?.outcome, "clawback_scheduled")
        XCTAssertEqual(first?.record?.state, PaymentState(status: .granted, pendingAction: .clawback, revoked: true))
        let again = try await store.recordNotification(notification, effect: { _, _ in
            XCTFail("a redelivered notification must not apply its effect again")
            return nil
        }, outcome: { _, _ in "x" })
        XCTAssertNil(again)
        let recorded = try await store.notificationOutcome(uuid: notification.notificationUUID)
        XCTAssertEqual(recorded, "clawback_scheduled")
    }

    func testAFailedEffectRollsBackTheNotificationToo() async throws {
        let store = try await PaymentsTestDatabase.store()
        let notification = NotificationRecord(notificationUUID: UUID(), notificationType: "REFUND", subtype: nil, environment: "Sandbox",
                                              transactionId: PaymentsTestDatabase.randomTransactionId(), signedDateUnixMilliseconds: nil, payloadJSON: "{}")
        do {
            _ = try await store.recordNotification(notification, effect: { _, _ in throw PaymentsError.internalFailure(detail: "boom") },
                                                   outcome: { _, _ in "x" })
            XCTFail("expected the effect's error")
        } catch {}
        let recorded = try await store.notificationOutcome(uuid: notification.notificationUUID)
        XCTAssertNil(recorded, "nothing may be recorded when the effect failed: Apple must retry")
    }

    func testRevokedRowForAnUnknownTransactionNeedsNoOwner() async throws {
        let store = try await PaymentsTestDatabase.store()
        let transactionId = PaymentsTestDatabase.randomTransactionId()
        let revoked = RevokedPayment(userId: nil, productCode: nil, appStoreProductId: "com.meeyao.qianwen.starter_pack", transactionId: transactionId,
                                     originalTransactionId: nil, environment: "Sandbox", bundleId: "com.meeyao.qianwen", appAccountToken: nil,
                                     purchaseDateUnixMilliseconds: 1_700_000_000_000, revocationDateUnixMilliseconds: 1_700_000_100_000,
                                     revocationReason: "1", signedTransactionInfo: "h.p.s", applePayloadJSON: "{}")
        let row = try await store.pool.withTransaction { try await store.insertRevoked(revoked, in: $0) }
        XCTAssertEqual(row?.state, PaymentState(status: .revoked, revoked: true))
        XCTAssertNil(row?.userId)
        // A verify later sees the revoked row, whoever submits it.
        guard case .existing(let existing) = try await store.insertVerified(PaymentsTestDatabase.newPayment(transactionId: transactionId)) else {
            return XCTFail("expected the revoked row")
        }
        XCTAssertEqual(PaymentSaga.decideExisting(existing.state, ownerUserId: existing.userId?.uuidString, requestingUserId: UUID().uuidString), .revoked)
    }

    func testTheDatabaseRefusesAStatusOutsideThePRDList() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        _ = try await store.insertVerified(payment)
        do {
            try await store.pool.withConnection {
                _ = try await $0.query("update apple_iap_transactions set status = 'paid' where transaction_id = $1", [.text(payment.transactionId)])
            }
            XCTFail("the CHECK constraint must refuse it")
        } catch let error as PostgresError {
            XCTAssertEqual(error.sqlState, "23514")
        }
    }

    func testAccountTokenIsStablePerUserAndMapsBack() async throws {
        let store = try await PaymentsTestDatabase.store()
        let user = UUID()
        let token = try await store.accountToken(userId: user)
        let again = try await store.accountToken(userId: user)
        XCTAssertEqual(token, again)
        let other = try await store.accountToken(userId: UUID())
        XCTAssertNotEqual(token, other)
        let owner = try await store.userId(forAccountToken: token)
        XCTAssertEqual(owner, user)
        let nobody = try await store.userId(forAccountToken: UUID())
        XCTAssertNil(nobody)
    }

    private func nextAttempt(_ store: PaymentsStore, _ transactionId: String) async throws -> String? {
        try await store.pool.withConnection {
            try await $0.query("select next_attempt_at::text as t from apple_iap_transactions where transaction_id = $1", [.text(transactionId)]).first!.optionalString("t")
        }
    }
}
