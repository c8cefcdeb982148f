import Foundation
@testable import PaymentsService
import PostgresClient
import XCTest

/// The storage edge on the real database: step 1 races, row-locked
/// transitions with compare-and-set on the owed step, worker claims with
/// leases, notifications recorded once.
final class PaymentsStoreTests: XCTestCase {
    private static let refund = AppleVerdict.revoked(
        Revocation(
            type: "REFUND_FULL", percentageMilliunits: nil, revocationReason: 0,
            dateUnixMilliseconds: 1_738_645_700_000))

    func testRecordingAClaimedPurchaseOwesTheGrantAndARepeatSeesTheRow() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        let first = try await PaymentsTestDatabase.record(store, payment)
        XCTAssertNil(first.before)
        XCTAssertEqual(first.after.pendingStep, .grant)
        XCTAssertEqual(first.after.status, .verified)
        XCTAssertEqual(first.after.userId, payment.claim?.userId)
        XCTAssertEqual(first.after.purchaseDateUnixMilliseconds, 1_738_645_560_000)
        XCTAssertEqual(first.after.state.verdictSignedAtUnixMilliseconds, 1_738_645_600_000)
        let again = try await PaymentsTestDatabase.record(store, payment)
        XCTAssertEqual(again.before?.id, first.after.id)
        XCTAssertEqual(again.after.state, first.after.state)
        XCTAssertFalse(again.conflict)
    }

    func testAClaimThroughTheAccountTokenHasNoEmailIdentityAndTheAppsLaterClaimKeepsIt() async throws {
        let store = try await PaymentsTestDatabase.store()
        let user = UUID(), other = UUID()
        var apple = PaymentsTestDatabase.newPayment(userId: user, claimed: false)
        apple.claim = PaymentClaim(userId: user, productCode: "popular_pack", credits: 420, origin: .appAccountToken)
        apple.quantity = 2
        let first = try await PaymentsTestDatabase.record(store, apple)
        XCTAssertEqual(first.after.pendingStep, .grant)
        XCTAssertEqual(first.after.userId, user)
        XCTAssertEqual(first.after.productCode, "popular_pack")
        XCTAssertEqual(first.after.state.credits, 420)
        XCTAssertEqual(first.after.quantity, 2)
        XCTAssertNil(first.after.emailHash, "claimed without an email identity")
        XCTAssertNil(first.after.emailMasked)
        XCTAssertEqual(
            PointsLedger.grantRequest(first.after).emailHash, "", "PointsService grants a regular pack without one")
        // The app's verify later: same user, its claim is not written over the first.
        let app = PaymentsTestDatabase.newPayment(
            userId: user, transactionId: apple.transactionId, productCode: "popular_pack")
        let verified = try await PaymentsTestDatabase.record(store, app)
        XCTAssertFalse(verified.conflict)
        XCTAssertEqual(verified.after.state.credits, 420)
        XCTAssertNil(verified.after.emailHash)
        // Another user's verify: a conflict, nothing written.
        let stolen = try await PaymentsTestDatabase.record(
            store, PaymentsTestDatabase.newPayment(userId: other, transactionId: apple.transactionId))
        XCTAssertTrue(stolen.conflict)
        XCTAssertEqual(stolen.after.userId, user)
    }

    func testAnAccountTokenClaimNeverMovesAnOwnerAndStillAppliesTheWord() async throws {
        let store = try await PaymentsTestDatabase.store()
        let owner = UUID(), other = UUID()
        let app = PaymentsTestDatabase.newPayment(userId: owner)
        try await PaymentsTestDatabase.record(store, app)
        var apple = PaymentsTestDatabase.newPayment(userId: other, transactionId: app.transactionId, claimed: false)
        apple.claim = PaymentClaim(userId: other, productCode: "starter_pack", credits: 100, origin: .appAccountToken)
        let refunded = try await PaymentsTestDatabase.record(store, apple, Self.refund, signedAt: 1_738_645_700_000)
        XCTAssertFalse(refunded.conflict, "Apple's word is applied even when its token names someone else")
        XCTAssertTrue(refunded.accepted)
        XCTAssertEqual(refunded.after.userId, owner)
        XCTAssertNotNil(refunded.after.state.verdict.revocation)
    }

    func testParallelRecordsOfOneTransactionCreateOneRowAndOneOwner() async throws {
        let store = try await PaymentsTestDatabase.store()
        let transactionId = PaymentsTestDatabase.randomTransactionId()
        let userA = UUID(), userB = UUID()
        let results = try await withThrowingTaskGroup(of: PaymentsStore.WordResult.self) { group in
            for index in 0..<50 {
                group.addTask {
                    try await PaymentsTestDatabase.record(
                        store,
                        PaymentsTestDatabase.newPayment(
                            userId: index % 2 == 0 ? userA : userB, transactionId: transactionId))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(results.filter { $0.before == nil }.count, 1)
        let owner = results.first { $0.before == nil }!.after.userId
        XCTAssertEqual(results.filter(\.conflict).count, 25, "every submission by the other user is a conflict")
        XCTAssertTrue(results.filter(\.conflict).allSatisfy { $0.after.userId == owner })
        let count = try await store.pool.withConnection {
            try await $0.query(
                "select count(*) as n from apple_iap_transactions where transaction_id = $1", [.text(transactionId)]
            ).first!.int64("n")
        }
        XCTAssertEqual(count, 1)
    }

    func testCompletingTheGrantMarksGrantedAndClearsTheSchedule() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, payment)
        let eventId = LedgerEventId.purchase(transactionId: payment.transactionId)
        guard
            case .applied(let granted) = try await store.complete(
                .grant, with: .granted(), transactionId: payment.transactionId, ledgerEventId: eventId)
        else {
            return XCTFail("expected the result to apply")
        }
        XCTAssertEqual(granted.status, .granted)
        XCTAssertEqual(granted.state.grant, .applied)
        XCTAssertEqual(granted.ledgerEventId, eventId)
        let due = try await nextAttempt(store, payment.transactionId)
        XCTAssertNil(due)
        // The same result again (a second runner's late reply) is stale and changes nothing.
        guard
            case .stale(let current) = try await store.complete(
                .grant, with: .granted(), transactionId: payment.transactionId)
        else {
            return XCTFail("expected a stale result")
        }
        XCTAssertEqual(current.state, granted.state)
    }

    /// The grant's result records what PointsService credited (claimed 100
    /// from a cached catalog, credited 40), in the lone and the batched
    /// update alike, so a later prorated refund takes its share of 40.
    func testTheGrantRecordsTheCreditsPointsServiceAdded() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payments = [PaymentsTestDatabase.newPayment(), PaymentsTestDatabase.newPayment()]
        for payment in payments { try await PaymentsTestDatabase.record(store, payment) }
        guard
            case .applied(let lone) = try await store.complete(
                .grant, with: .granted(credits: 40), transactionId: payments[0].transactionId)
        else { return XCTFail("expected the result to apply") }
        XCTAssertEqual(lone.state.credits, 40)
        let found = try await store.find(transactionId: payments[1].transactionId)
        let seen = try XCTUnwrap(found)
        let batched = try await store.completeIfUnchanged(
            .grant, with: .granted(credits: 40), over: seen,
            ledgerEventId: LedgerEventId.purchase(transactionId: seen.transactionId))
        XCTAssertEqual(batched?.state.credits, 40)
        let refunded = try await PaymentsTestDatabase.record(
            store, payments[0],
            .revoked(
                Revocation(
                    type: "REFUND_PRORATED", percentageMilliunits: 50_000, revocationReason: 1,
                    dateUnixMilliseconds: 1_738_645_700_000)),
            signedAt: 1_738_645_700_000)
        XCTAssertEqual(refunded.after.pendingStep, .clawback(cycle: 1, amount: 20, reason: "APP_ISSUE"))
    }

    func testAResultForAStepNoLongerOwedIsDropped() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, payment)
        _ = try await store.complete(.grant, with: .granted(), transactionId: payment.transactionId)
        let refunded = try await PaymentsTestDatabase.record(
            store, PaymentsTestDatabase.newPayment(transactionId: payment.transactionId, claimed: false),
            Self.refund, signedAt: 1_738_645_700_000)
        XCTAssertEqual(refunded.after.pendingStep, .clawback(cycle: 1, amount: 100, reason: "OTHER"))
        // A clawback result computed for another cycle, or another amount, does not apply.
        guard
            case .stale = try await store.complete(
                .clawback(cycle: 2, amount: 100, reason: "OTHER"), with: .clawedBack(deducted: 100, overdue: 0),
                transactionId: payment.transactionId)
        else { return XCTFail("expected stale") }
        guard
            case .applied(let clawedBack) = try await store.complete(
                .clawback(cycle: 1, amount: 100, reason: "OTHER"), with: .clawedBack(deducted: 70, overdue: 30),
                transactionId: payment.transactionId)
        else {
            return XCTFail("expected applied")
        }
        XCTAssertEqual(clawedBack.status, .refundedInsufficient)
        XCTAssertEqual(clawedBack.state.cycle?.overdue, 30)
        let failureCode = try await column(store, payment.transactionId, "failure_code")
        XCTAssertEqual(failureCode, "INSUFFICIENT_BALANCE")
    }

    /// The step-3 update committed and its reply was lost (the batcher then
    /// runs it again alone, and its guard misses): the replay finds the row
    /// reading exactly as its own result left it, so it is answered as
    /// applied (the overdue alert, the metric and the audit line follow
    /// `.applied`) and writes nothing a second time.
    func testAResultReplayedOverTheSameSeenRowIsAppliedAndWrittenOnce() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, payment)
        _ = try await store.complete(.grant, with: .granted(), transactionId: payment.transactionId)
        try await PaymentsTestDatabase.record(
            store, PaymentsTestDatabase.newPayment(transactionId: payment.transactionId, claimed: false),
            Self.refund, signedAt: 1_738_645_700_000)
        let claimed = try await store.claim(transactionId: payment.transactionId)
        let seen = try XCTUnwrap(claimed)
        let step = LedgerStep.clawback(cycle: 1, amount: 100, reason: "OTHER")
        let overdue = StepOutcome.clawedBack(deducted: 70, overdue: 30)
        guard
            case .applied(let first) = try await store.recordResult(step, with: overdue, over: seen, ledgerEventId: nil)
        else {
            return XCTFail("expected the first recording to apply")
        }
        XCTAssertEqual(first.status, .refundedInsufficient)
        let version = try await column(store, payment.transactionId, "xmin")
        guard
            case .applied(let replayed) = try await store.recordResult(
                step, with: overdue, over: seen, ledgerEventId: nil)
        else {
            return XCTFail("the replay of this attempt's own result must be reported as applied")
        }
        XCTAssertEqual(replayed.state, first.state)
        let versionAfterReplay = try await column(store, payment.transactionId, "xmin")
        XCTAssertEqual(versionAfterReplay, version, "the replay wrote nothing")
        // Another answer for the same step is still stale.
        guard
            case .stale = try await store.recordResult(
                step, with: .clawedBack(deducted: 100, overdue: 0), over: seen, ledgerEventId: nil)
        else {
            return XCTFail("a different result for a step already recorded is stale")
        }
    }

    func testAnOlderWordChangesNothing() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, payment, signedAt: 2_000)
        let late = try await PaymentsTestDatabase.record(store, payment, Self.refund, signedAt: 1_000)
        XCTAssertFalse(late.accepted)
        XCTAssertEqual(late.after.state, late.before?.state)
        XCTAssertEqual(late.after.status, .verified)
    }

    func testTransientFailureBacksOffAndTheWorkerClaimsItWhenDue() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        let recorded = try await PaymentsTestDatabase.record(store, payment).after
        // Leased to the inserting caller: neither the worker nor another inline runner gets it.
        let early = try await store.claimDue(limit: 1000)
        XCTAssertFalse(early.contains { $0.transactionId == payment.transactionId })
        let inline = try await store.claim(transactionId: payment.transactionId)
        XCTAssertNil(inline, "an inline runner respects the lease too")
        let failed = try await store.postpone(.grant, seen: recorded, error: "points unavailable")
        XCTAssertEqual(failed?.pendingStep, .grant)
        XCTAssertEqual(failed?.lastError, "points unavailable")
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
        // The first runner's late failure does not cut the worker's lease short.
        let late = try await store.postpone(.grant, seen: recorded, error: "late failure of the first runner")
        XCTAssertNil(late)
        let stillLeased = try await store.claimDue(limit: 1000)
        XCTAssertFalse(stillLeased.contains { $0.transactionId == payment.transactionId })
        // Postponing a step the row no longer owes does nothing.
        _ = try await store.complete(.grant, with: .granted(), transactionId: payment.transactionId)
        let ignored = try await store.postpone(.grant, seen: try XCTUnwrap(claimed), error: "late")
        XCTAssertNil(ignored)
    }

    func testRedriveMakesARefusedGrantOwedAndDue() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, payment)
        _ = try await store.complete(
            .grant, with: .grantRefused(reason: "STARTER_PACK_INELIGIBLE"), transactionId: payment.transactionId)
        let (before, after) = try await store.redrive(transactionId: payment.transactionId)
        XCTAssertEqual(before.status, .failed)
        XCTAssertEqual(after.pendingStep, .grant)
        XCTAssertEqual(after.attemptCount, 0)
        let claimed = try await store.claim(transactionId: payment.transactionId)
        XCTAssertNotNil(claimed, "a redriven step is due at once")
        do {
            _ = try await store.redrive(transactionId: PaymentsTestDatabase.randomTransactionId())
            XCTFail("expected TRANSACTION_NOT_FOUND")
        } catch {
            XCTAssertEqual(error, .transactionNotFound)
        }
    }

    /// A redrive of a refused grant recreates the state a runner leased
    /// before it read (grant owed, attempt 1): that runner's late refusal
    /// must not be recorded over the redriven grant, nor postpone it, and
    /// the redrive's own runner records its grant.
    func testAResultOfARunnerLeasedBeforeARedriveIsStale() async throws {
        let (store, payment, stale) = try await purchaseClaimedOnce()
        let refusal = StepOutcome.grantRefused(reason: "STARTER_PACK_INELIGIBLE")
        _ = try await store.complete(.grant, with: refusal, transactionId: payment.transactionId)
        _ = try await store.redrive(transactionId: payment.transactionId)
        let claimedAfter = try await store.claim(transactionId: payment.transactionId)
        let current = try XCTUnwrap(claimedAfter)
        XCTAssertEqual(current.state, stale.state, "the redrive recreates the state the stale runner read")
        XCTAssertEqual(current.attemptCount, stale.attemptCount)
        let late = try await store.completeIfUnchanged(.grant, with: refusal, over: stale)
        XCTAssertNil(late, "the guard tells the owing periods apart")
        guard case .stale = try await store.recordResult(.grant, with: refusal, over: stale, ledgerEventId: nil) else {
            return XCTFail("the locked path tells the owing periods apart too")
        }
        let postponed = try await store.postpone(.grant, seen: stale, error: "late")
        XCTAssertNil(postponed)
        guard
            case .applied(let granted) = try await store.recordResult(
                .grant, with: .granted(), over: current,
                ledgerEventId: LedgerEventId.purchase(transactionId: payment.transactionId))
        else {
            return XCTFail("the redrive's runner records its grant")
        }
        XCTAssertEqual(granted.status, .granted)
    }

    /// A redrive of a step still owed keeps its attempt count, so the next
    /// claim never hands out the number a runner leased before it holds,
    /// and that runner's late failure does not cut the new lease short.
    func testARedriveOfAStepStillOwedNeverReusesAnAttemptNumber() async throws {
        let (store, payment, stale) = try await purchaseClaimedOnce()
        let (_, redriven) = try await store.redrive(transactionId: payment.transactionId)
        XCTAssertEqual(redriven.pendingStep, .grant)
        let claimedAfter = try await store.claim(transactionId: payment.transactionId)
        let current = try XCTUnwrap(claimedAfter)
        XCTAssertNotEqual(current.attemptCount, stale.attemptCount)
        let postponed = try await store.postpone(
            .grant, seen: stale, error: "late failure of the runner leased before the redrive")
        XCTAssertNil(postponed)
        let stillLeased = try await store.claimDue(limit: 1000)
        XCTAssertFalse(stillLeased.contains { $0.transactionId == payment.transactionId })
    }

    func testNotificationIsRecordedOnceAndAppliesItsEffectInTheSameTransaction() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, payment)
        _ = try await store.complete(.grant, with: .granted(), transactionId: payment.transactionId)
        let notification = NotificationRecord(
            notificationUUID: UUID(), notificationType: "REFUND", subtype: nil, environment: "Sandbox",
            transactionId: payment.transactionId, signedDateUnixMilliseconds: 1_738_645_700_000, payloadJSON: "{}")
        let unclaimed = PaymentsTestDatabase.newPayment(transactionId: payment.transactionId, claimed: false)
        let first = try await store.recordNotification(notification) { connection in
            let word = try await store.record(
                Self.refund, signedAtUnixMilliseconds: 1_738_645_700_000, for: unclaimed, in: connection)
            return (outcome: "clawback_scheduled", detail: word.after)
        }
        XCTAssertEqual(first?.outcome, "clawback_scheduled")
        XCTAssertEqual(first?.detail.pendingStep, .clawback(cycle: 1, amount: 100, reason: "OTHER"))
        let again = try await store.recordNotification(notification) { _ -> (outcome: String, detail: PaymentRecord?) in
            XCTFail("a redelivered notification must not apply its effect again")
            return ("x", nil)
        }
        XCTAssertNil(again)
        let recorded = try await store.notificationOutcome(uuid: notification.notificationUUID)
        XCTAssertEqual(recorded, "clawback_scheduled")
    }

    func testAFailedEffectRollsBackTheNotificationToo() async throws {
        let store = try await PaymentsTestDatabase.store()
        let notification = NotificationRecord(
            notificationUUID: UUID(), notificationType: "REFUND", subtype: nil, environment: "Sandbox",
            transactionId: PaymentsTestDatabase.randomTransactionId(), signedDateUnixMilliseconds: nil,
            payloadJSON: "{}")
        do {
            _ = try await store.recordNotification(notification) { _ -> (outcome: String, detail: PaymentRecord?) in
                throw PaymentsError.internalFailure(detail: "boom")
            }
            XCTFail("expected the effect's error")
        } catch {}
        let recorded = try await store.notificationOutcome(uuid: notification.notificationUUID)
        XCTAssertNil(recorded, "nothing may be recorded when the effect failed: Apple must retry")
    }

    func testARefundOfAnUnknownTransactionNeedsNoOwnerAndALaterClaimTakesIt() async throws {
        let store = try await PaymentsTestDatabase.store()
        let transactionId = PaymentsTestDatabase.randomTransactionId()
        let notified = try await PaymentsTestDatabase.record(
            store, PaymentsTestDatabase.newPayment(transactionId: transactionId, claimed: false),
            Self.refund, signedAt: 2_000)
        XCTAssertEqual(notified.after.status, .revoked)
        XCTAssertNil(notified.after.userId)
        XCTAssertNil(notified.after.pendingStep)
        // The app's verify later claims it (its JWS is older): still revoked, nothing owed, but the owner is kept.
        let user = UUID()
        let claimed = try await PaymentsTestDatabase.record(
            store, PaymentsTestDatabase.newPayment(userId: user, transactionId: transactionId), signedAt: 1_000)
        XCTAssertFalse(claimed.conflict)
        XCTAssertEqual(claimed.after.userId, user)
        XCTAssertTrue(claimed.after.state.claimed)
        XCTAssertEqual(claimed.after.status, .revoked)
        XCTAssertNil(claimed.after.pendingStep)
        // Apple's REFUND_REVERSED then owes the grant.
        let reversed = try await PaymentsTestDatabase.record(
            store, PaymentsTestDatabase.newPayment(transactionId: transactionId, claimed: false),
            .purchased, signedAt: 3_000)
        XCTAssertEqual(reversed.after.pendingStep, .grant)
    }

    /// A row Apple's word left unclaimed while it said "purchased" (the
    /// catalog could not be asked), then Apple's REFUND naming our token:
    /// the refund's own claim is judged by the refund, so nothing is ever
    /// credited (judged first, it owed a grant that was then clawed back).
    func testAClaimThatComesWithARefundInFullOwesNoGrant() async throws {
        let store = try await PaymentsTestDatabase.store()
        let user = UUID()
        let transactionId = PaymentsTestDatabase.randomTransactionId()
        var charge = PaymentsTestDatabase.newPayment(userId: user, transactionId: transactionId, claimed: false)
        charge.tokenOwner = user
        let received = try await PaymentsTestDatabase.record(store, charge, .purchased, signedAt: 1_000)
        XCTAssertEqual(received.after.status, .received)
        XCTAssertNil(received.after.pendingStep)
        var refund = charge
        refund.claim = PaymentClaim(userId: user, productCode: "popular_pack", credits: 420, origin: .appAccountToken)
        let refunded = try await PaymentsTestDatabase.record(store, refund, Self.refund, signedAt: 2_000)
        XCTAssertTrue(refunded.accepted)
        XCTAssertTrue(refunded.after.state.claimed)
        XCTAssertEqual(refunded.after.userId, user)
        XCTAssertEqual(refunded.after.status, .revoked)
        XCTAssertNil(refunded.after.pendingStep, "no grant, so no clawback")
        XCTAssertEqual(refunded.after.state.grant, .notOwed)
        // Nothing for the worker either.
        let due = try await store.pool.withConnection {
            try await $0.query(
                "select count(*) as n from apple_iap_transactions where transaction_id = $1 and next_attempt_at is not null",
                [.text(transactionId)]
            ).first!.int64("n")
        }
        XCTAssertEqual(due, 0)
    }

    func testTheDatabaseRefusesAStatusOutsideThePRDList() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, payment)
        do {
            try await store.pool.withConnection {
                _ = try await $0.query(
                    "update apple_iap_transactions set status = 'paid' where transaction_id = $1",
                    [.text(payment.transactionId)])
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
        let owner = try await store.pool.withConnection { try await store.userId(forAccountToken: token, in: $0) }
        XCTAssertEqual(owner, user)
        let nobody = try await store.pool.withConnection { try await store.userId(forAccountToken: UUID(), in: $0) }
        XCTAssertNil(nobody)
    }

    /// A new purchase whose grant a runner claimed at attempt 1 (the
    /// inserting caller's lease ended at once).
    private func purchaseClaimedOnce() async throws -> (
        store: PaymentsStore, payment: NewPayment, leased: PaymentRecord
    ) {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, payment)
        try await store.pool.withConnection {
            _ = try await $0.query(
                "update apple_iap_transactions set next_attempt_at = now() where transaction_id = $1",
                [.text(payment.transactionId)])
        }
        let claimed = try await store.claim(transactionId: payment.transactionId)
        return (store, payment, try XCTUnwrap(claimed))
    }

    private func nextAttempt(_ store: PaymentsStore, _ transactionId: String) async throws -> String? {
        try await column(store, transactionId, "next_attempt_at")
    }

    private func column(_ store: PaymentsStore, _ transactionId: String, _ name: String) async throws -> String? {
        try await store.pool.withConnection {
            try await $0.query(
                "select \(name)::text as t from apple_iap_transactions where transaction_id = $1",
                [.text(transactionId)]
            ).first!.optionalString("t")
        }
    }
}

/// The saga backlog query behind `iap_saga_stuck_rows` and the oldest owed
/// step's age, on a pool of its own (the shared one may hold connections a
/// PostgreSQL restart of an earlier test left dead).
final class PaymentsStoreOwedStepsTests: XCTestCase {
    func testARecordedPurchaseOwesItsGrantAndCountsAsStuckOnlyPastTheThreshold() async throws {
        let shared = try await PaymentsTestDatabase.store()
        let pool = PostgresPool(
            configuration: .init(
                connectionString: try PaymentsTestDatabase.url, connectionsMax: 2,
                searchPath: PaymentsTestDatabase.schema))
        let store = PaymentsStore(pool: pool, backoff: shared.backoff)
        do {
            try await checkOwedSteps(store)
        } catch {
            await pool.close()
            throw error
        }
        await pool.close()
    }

    private func checkOwedSteps(_ store: PaymentsStore) async throws {
        let before = try await store.owedSteps(stuckAfter: .seconds(3600))
        _ = try await PaymentsTestDatabase.record(store, PaymentsTestDatabase.newPayment())
        try await Task.sleep(for: .milliseconds(20))
        let longThreshold = try await store.owedSteps(stuckAfter: .seconds(3600))
        XCTAssertEqual(
            longThreshold.stuckRows[.grant] ?? 0, before.stuckRows[.grant] ?? 0, "owed for 20 ms: not stuck at 1 h")
        let shortThreshold = try await store.owedSteps(stuckAfter: .milliseconds(1))
        XCTAssertGreaterThanOrEqual(shortThreshold.stuckRows[.grant] ?? 0, 1)
        XCTAssertGreaterThan(shortThreshold.oldestOwedSeconds, 0)
    }
}
