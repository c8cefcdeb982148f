import Foundation
@testable import PaymentsService
import PostgresClient
import TestSupport
import XCTest

/// The purchase's one-statement paths on the real database
/// (`PaymentsStore+OneStatementPaths`): what they write when their
/// precondition holds, and that they write nothing when it does not, so the
/// caller's row-locked fallback decides exactly as before.
final class OneStatementPathTests: XCTestCase {
    private static let refund = AppleVerdict.revoked(
        Revocation(
            type: "REFUND_FULL", percentageMilliunits: nil, revocationReason: 0,
            dateUnixMilliseconds: 1_738_645_700_000))
    private static let signedAt: Int64 = 1_738_645_600_000

    // MARK: Step 1: recordIfNew

    func testAFreshPurchaseIsWrittenClaimedOwingTheGrantAndLeasedToTheCaller() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        guard let word = try await store.recordIfNew(.purchased, signedAtUnixMilliseconds: Self.signedAt, for: payment)
        else {
            return XCTFail("a transaction seen for the first time is inserted")
        }
        XCTAssertNil(word.before)
        XCTAssertTrue(word.accepted)
        XCTAssertFalse(word.conflict)
        XCTAssertEqual(
            word.after.state,
            PurchaseState(
                verdict: .purchased, verdictSignedAtUnixMilliseconds: Self.signedAt, claimed: true,
                credits: 100, grant: .owed))
        XCTAssertEqual(word.after.status, .verified)
        XCTAssertEqual(word.after.pendingStep, .grant)
        XCTAssertEqual(word.after.userId, payment.claim?.userId)
        XCTAssertEqual(word.after.productCode, "starter_pack")
        XCTAssertEqual(word.after.emailHash, payment.claim?.emailIdentity?.hash)
        XCTAssertEqual(word.after.attemptCount, 0)
        XCTAssertEqual(word.after.createdAtUnixMilliseconds, word.after.updatedAtUnixMilliseconds)
        let row = try await columns(
            store, payment.transactionId,
            [
                "status", "pending_action", "grant_state", "claimed", "revoked", "failure_code", "clawback_cycle",
                "ledger_event_id",
                "last_error", "(next_attempt_at > now() + interval '1 second')", "(owed_since = created_at)",
            ])
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
        let row = try await columns(
            store, payment.transactionId,
            ["revoked", "revocation_reason", "revocation_type", "next_attempt_at", "owed_since"])
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
            try await store.record(
                .purchased, signedAtUnixMilliseconds: Self.signedAt + 1, for: app, in: $0, rowExists: true)
        }
        XCTAssertEqual(claimed.before, first.after)
        XCTAssertEqual(claimed.after.pendingStep, .grant)
        XCTAssertEqual(claimed.after.userId, user)
        // Another user's verify of that transaction: skipped, then a conflict under the lock.
        let stolen = PaymentsTestDatabase.newPayment(transactionId: notified.transactionId)
        let skippedAgain = try await store.recordIfNew(
            .purchased, signedAtUnixMilliseconds: Self.signedAt + 2, for: stolen)
        XCTAssertNil(skippedAgain)
        let conflict = try await store.pool.withTransaction {
            try await store.record(
                .purchased, signedAtUnixMilliseconds: Self.signedAt + 2, for: stolen, in: $0, rowExists: true)
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
                group.addTask {
                    try await store.recordIfNew(.purchased, signedAtUnixMilliseconds: Self.signedAt, for: payment)
                        != nil
                }
            }
            return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        XCTAssertEqual(inserted, 1)
    }

    // MARK: Step results: completeIfUnchanged

    func testAResultOnAnUntouchedRowIsWrittenAsTheLockedPathWritesIt() async throws {
        let store = try await PaymentsTestDatabase.store()
        let fast = PaymentsTestDatabase.newPayment(), locked = PaymentsTestDatabase.newPayment()
        guard
            let seen = try await store.recordIfNew(.purchased, signedAtUnixMilliseconds: Self.signedAt, for: fast)?
                .after
        else {
            return XCTFail("expected a fresh row")
        }
        try await PaymentsTestDatabase.record(store, locked)
        let eventId = LedgerEventId.purchase(transactionId: fast.transactionId)
        let granted = try await store.completeIfUnchanged(.grant, with: .granted(), over: seen, ledgerEventId: eventId)
        XCTAssertEqual(granted?.status, .granted)
        XCTAssertEqual(granted?.ledgerEventId, eventId)
        XCTAssertNil(granted?.pendingStep)
        guard
            case .applied(let reference) = try await store.complete(
                .grant, with: .granted(), transactionId: locked.transactionId,
                ledgerEventId: LedgerEventId.purchase(transactionId: locked.transactionId))
        else {
            return XCTFail("expected the locked path to apply")
        }
        XCTAssertEqual(granted?.state, reference.state)
        let views = [
            "status", "pending_action", "grant_state", "failure_code", "next_attempt_at", "owed_since", "attempt_count",
            "last_error",
        ]
        let fastRow = try await columns(store, fast.transactionId, views)
        let lockedRow = try await columns(store, locked.transactionId, views)
        XCTAssertEqual(fastRow, lockedRow)
        XCTAssertEqual(fastRow, ["granted", nil, "applied", nil, nil, nil, "0", nil])
        // The same result again is not applied twice: the row no longer reads as `seen`.
        let again = try await store.completeIfUnchanged(.grant, with: .granted(), over: seen, ledgerEventId: eventId)
        XCTAssertNil(again)
        guard case .stale = try await store.complete(.grant, with: .granted(), transactionId: fast.transactionId) else {
            return XCTFail("the locked fallback finds the result recorded")
        }
    }

    /// The race the guard exists for: Apple's REFUND is recorded (a
    /// notification, in its own transaction) while the grant runs. The
    /// runner's one-statement write misses, and the locked path it falls
    /// back to records the grant and owes the clawback, as before.
    func testAGrantResultAfterARefundNotificationFallsBackAndOwesTheClawback() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        guard
            let seen = try await store.recordIfNew(.purchased, signedAtUnixMilliseconds: Self.signedAt, for: payment)?
                .after
        else {
            return XCTFail("expected a fresh row")
        }
        let notification = NotificationRecord(
            notificationUUID: UUID(), notificationType: "REFUND", subtype: nil, environment: "Sandbox",
            transactionId: payment.transactionId, signedDateUnixMilliseconds: 1_738_645_700_000, payloadJSON: "{}")
        let unclaimed = PaymentsTestDatabase.newPayment(transactionId: payment.transactionId, claimed: false)
        let refunded = try await store.recordNotification(notification) { connection in
            let word = try await store.record(
                Self.refund, signedAtUnixMilliseconds: 1_738_645_700_000, for: unclaimed, in: connection)
            return (outcome: "recorded", detail: word.after)
        }?.detail
        XCTAssertEqual(refunded?.pendingStep, .grant, "the owed grant is completed before anything else is owed")
        let eventId = LedgerEventId.purchase(transactionId: payment.transactionId)
        let missed = try await store.completeIfUnchanged(.grant, with: .granted(), over: seen, ledgerEventId: eventId)
        XCTAssertNil(missed, "the row changed since the runner read it")
        let untouched = try await store.find(transactionId: payment.transactionId)
        XCTAssertEqual(untouched, refunded, "a missed guard writes nothing")
        guard
            case .applied(let after) = try await store.complete(
                .grant, with: .granted(), transactionId: payment.transactionId,
                ledgerEventId: eventId)
        else {
            return XCTFail("the locked path applies the grant")
        }
        XCTAssertEqual(after.state.grant, .applied)
        XCTAssertEqual(after.state.verdict, Self.refund)
        XCTAssertEqual(after.pendingStep, .clawback(cycle: 1, amount: 100, reason: "OTHER"))
        XCTAssertEqual(after.ledgerEventId, eventId)
    }

    func testAClawbackResultIsWrittenInOneStatementWithItsOverdue() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, payment)
        _ = try await store.complete(.grant, with: .granted(), transactionId: payment.transactionId)
        let refunded = try await PaymentsTestDatabase.record(
            store, PaymentsTestDatabase.newPayment(transactionId: payment.transactionId, claimed: false),
            Self.refund, signedAt: 1_738_645_700_000)
        let step = LedgerStep.clawback(cycle: 1, amount: 100, reason: "OTHER")
        XCTAssertEqual(refunded.after.pendingStep, step)
        let clawedBack = try await store.completeIfUnchanged(
            step, with: .clawedBack(deducted: 70, overdue: 30), over: refunded.after)
        XCTAssertEqual(clawedBack?.status, .refundedInsufficient)
        XCTAssertEqual(clawedBack?.state.cycle?.overdue, 30)
        let row = try await columns(
            store, payment.transactionId, ["failure_code", "pending_action", "next_attempt_at"])
        XCTAssertEqual(row, ["INSUFFICIENT_BALANCE", nil, nil])
        // A result computed for another step never applies, in one statement or under the lock.
        let other = try await store.completeIfUnchanged(.reverse(cycle: 1), with: .reversed, over: refunded.after)
        XCTAssertNil(other)
    }

    /// Twin rows get the same words and the same step results; one records
    /// results as the runner does (one statement over a possibly stale
    /// read, else the locked path), the other only under the lock. They
    /// must never differ: in state, in views and schedule, or in whether a
    /// result applied. Seeded (ONE_STATEMENT_SEED replays one), and a
    /// failure names its sequence.
    func testTheOneStatementResultAlwaysEndsWhereTheLockedPathEnds() async throws {
        let store = try await PaymentsTestDatabase.store()
        let seed = SeededRandom.seed(from: "ONE_STATEMENT_SEED")
        var random = SeededRandom(seed: seed)
        let verdicts: [AppleVerdict] = [
            .purchased, Self.refund,
            .revoked(
                Revocation(
                    type: "REFUND_PRORATED", percentageMilliunits: 50_000, revocationReason: 1,
                    dateUnixMilliseconds: 1_738_645_800_000)),
        ]
        var oneStatement = 0, fellBack = 0
        for trial in 0..<25 {
            let user = UUID()
            let fast = PaymentsTestDatabase.newPayment(userId: user),
                locked = PaymentsTestDatabase.newPayment(userId: user)
            var signedAt = Self.signedAt
            guard
                var seen = try await store.recordIfNew(.purchased, signedAtUnixMilliseconds: signedAt, for: fast)?.after
            else {
                return XCTFail("expected a fresh row")
            }
            try await PaymentsTestDatabase.record(store, locked, signedAt: signedAt)
            var history: [String] = []
            for _ in 0..<10 {
                switch random.next(upTo: 3) {
                case 0:
                    // A runner reads the row now (as a claim does).
                    seen = try await store.find(transactionId: fast.transactionId) ?? seen
                    history.append("read")
                case 1:
                    // Apple's word, usually newer, sometimes older than the one in force.
                    let verdict = verdicts[Int(random.next(upTo: UInt64(verdicts.count)))]
                    signedAt += random.next(upTo: 4) == 0 ? -500 : 1_000
                    for payment in [fast, locked] {
                        let word = PaymentsTestDatabase.newPayment(transactionId: payment.transactionId, claimed: false)
                        try await PaymentsTestDatabase.record(store, word, verdict, signedAt: signedAt)
                    }
                    history.append("word \(verdict) at \(signedAt)")
                default:
                    // The result of the step the runner's read owes.
                    guard let step = seen.pendingStep else { continue }
                    let outcome = StepOutcomeSamples.outcome(of: step, &random)
                    let fastRecording: PaymentsStore.StepRecording
                    if let applied = try await store.completeIfUnchanged(step, with: outcome, over: seen) {
                        fastRecording = .applied(applied)
                        oneStatement += 1
                    } else {
                        fastRecording = try await store.complete(step, with: outcome, transactionId: fast.transactionId)
                        fellBack += 1
                    }
                    let lockedRecording = try await store.complete(
                        step, with: outcome, transactionId: locked.transactionId)
                    history.append("\(step) -> \(outcome)")
                    XCTAssertEqual(
                        Self.applied(fastRecording), Self.applied(lockedRecording),
                        "seed \(seed) trial \(trial): \(history)")
                }
                let fastRow = try await store.find(transactionId: fast.transactionId)
                let lockedRow = try await store.find(transactionId: locked.transactionId)
                XCTAssertEqual(fastRow?.state, lockedRow?.state, "seed \(seed) trial \(trial): \(history)")
                let views = [
                    "status", "pending_action", "grant_state", "failure_code", "ledger_event_id is null",
                    "next_attempt_at is null",
                    "owed_since is null", "attempt_count", "last_error", "revocation_reason", "revocation_type",
                ]
                let fastViews = try await columns(store, fast.transactionId, views)
                let lockedViews = try await columns(store, locked.transactionId, views)
                XCTAssertEqual(fastViews, lockedViews, "seed \(seed) trial \(trial): \(history)")
            }
        }
        XCTAssertGreaterThan(oneStatement, 0, "seed \(seed): some results were written in one statement")
        XCTAssertGreaterThan(fellBack, 0, "seed \(seed): some results fell back to the locked path")
        print("one-statement results: \(oneStatement), fallbacks: \(fellBack) (seed \(seed))")
    }

    private static func applied(_ recording: PaymentsStore.StepRecording) -> Bool {
        if case .applied = recording { return true }
        return false
    }

    // MARK: Helpers

    /// `names` of the transaction's row, as text (nil for NULL).
    private func columns(_ store: PaymentsStore, _ transactionId: String, _ names: [String]) async throws -> [String?] {
        let list = names.enumerated().map { "(\($0.element))::text as c\($0.offset)" }.joined(separator: ", ")
        return try await store.pool.withConnection { connection in
            guard
                let row = try await connection.query(
                    "select \(list) from apple_iap_transactions where transaction_id = $1",
                    [.text(transactionId)]
                ).first
            else { return [] }
            return try names.indices.map { try row.optionalString("c\($0)") }
        }
    }
}
