import Contracts
import Foundation
import PostgresClient
import RPCCore
import TestSupport
import XCTest

/// Crash safety: either service SIGKILLed at each saga step (FAULT_POINTS),
/// and PostgreSQL stopped under load; after a restart the saga worker
/// finishes every purchase with exactly one grant.
final class PaymentsCrashTests: XCTestCase {
    /// Runs `body` on a fresh cluster and always shuts it down.
    private func withCluster(
        paymentsFaults: String? = nil, pointsFaults: String? = nil, _ body: (PaymentsCluster) async throws -> Void
    ) async throws {
        let cluster = try await PaymentsCluster.start(paymentsFaults: paymentsFaults, pointsFaults: pointsFaults)
        do {
            try await body(cluster)
        } catch {
            await cluster.shutdown()
            throw error
        }
        await cluster.shutdown()
    }

    // MARK: PaymentsService killed

    func testPaymentsKilledAfterStep1IsGrantedOnceAfterRestart() async throws {
        try await paymentsKilled(at: "payments.after_step1", statusAfterCrash: "verified", purchaseRowsAfterCrash: 0)
    }

    func testPaymentsKilledAfterStep2IsGrantedOnceAfterRestart() async throws {
        try await paymentsKilled(at: "payments.after_step2", statusAfterCrash: "verified", purchaseRowsAfterCrash: 1)
    }

    func testPaymentsKilledAfterStep3StaysGrantedOnceAfterRestart() async throws {
        try await paymentsKilled(at: "payments.after_step3", statusAfterCrash: "granted", purchaseRowsAfterCrash: 1)
    }

    private func paymentsKilled(
        at point: String, statusAfterCrash: String, purchaseRowsAfterCrash: Int64, file: StaticString = #filePath,
        line: UInt = #line
    ) async throws {
        try await withCluster(paymentsFaults: point) { cluster in
            let user = UUID()
            let transactionId = PaymentsCluster.randomTransactionId()
            let request = try cluster.verifyRequest(
                user: user, productCode: "popular_pack", transactionId: transactionId)
            do {
                _ = try await cluster.verify(request)
                XCTFail("PaymentsService should have died at \(point)", file: file, line: line)
            } catch {}
            let exited = try await cluster.payments.waitForExit()
            XCTAssertTrue(exited, "PaymentsService killed itself at \(point)", file: file, line: line)
            let status = try await cluster.status(transactionId)
            XCTAssertEqual(status, statusAfterCrash, "row after the crash", file: file, line: line)
            let rows = try await cluster.purchaseRows(transactionId)
            XCTAssertEqual(rows, purchaseRowsAfterCrash, "ledger after the crash", file: file, line: line)

            try await cluster.startPayments()
            let settled = try await cluster.waitSettled(transactionId, status: "granted")
            XCTAssertTrue(settled, "the worker finished the saga", file: file, line: line)
            try await cluster.assertGrantedOnce(
                transactionId, user: user, productCode: "popular_pack", file: file, line: line)
            // The app's retry now sees it credited.
            let again = try await cluster.verify(request)
            XCTAssertEqual(again.outcome, .alreadyGranted, file: file, line: line)
            XCTAssertEqual(again.creditsAdded, 0, file: file, line: line)
            XCTAssertEqual(again.newBalance, 210, file: file, line: line)
            try await cluster.assertGrantedOnce(
                transactionId, user: user, productCode: "popular_pack", file: file, line: line)
            try await cluster.assertPointsInvariants(users: [user], file: file, line: line)
        }
    }

    // MARK: PointsService killed during step 2

    func testPointsKilledBeforeCommitIsGrantedOnceAfterRestart() async throws {
        try await pointsKilled(at: "points.grant_before_commit", purchaseRowsAfterCrash: 0)
    }

    func testPointsKilledAfterCommitIsGrantedOnceAfterRestart() async throws {
        try await pointsKilled(at: "points.grant_after_commit", purchaseRowsAfterCrash: 1)
    }

    private func pointsKilled(
        at point: String, purchaseRowsAfterCrash: Int64, file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        try await withCluster(pointsFaults: point) { cluster in
            let user = UUID()
            let transactionId = PaymentsCluster.randomTransactionId()
            let request = try cluster.verifyRequest(
                user: user, productCode: "premium_pack", transactionId: transactionId)
            await expectRPCError(.unavailable, reason: "POINTS_UNAVAILABLE", file: file, line: line) {
                _ = try await cluster.verify(request)
            }
            let exited = try await cluster.points.waitForExit()
            XCTAssertTrue(exited, "PointsService killed itself at \(point)", file: file, line: line)
            let row = try await cluster.row(transactionId)
            XCTAssertEqual(row?.status, "verified", file: file, line: line)
            XCTAssertEqual(row?.pendingAction, "grant", "the grant stays owed", file: file, line: line)
            let rows = try await cluster.purchaseRows(transactionId)
            XCTAssertEqual(rows, purchaseRowsAfterCrash, file: file, line: line)

            try await cluster.startPoints()
            let settled = try await cluster.waitSettled(transactionId, status: "granted")
            XCTAssertTrue(settled, "the worker finished the saga once PointsService was back", file: file, line: line)
            try await cluster.assertGrantedOnce(
                transactionId, user: user, productCode: "premium_pack", file: file, line: line)
            let again = try await cluster.verify(request)
            XCTAssertEqual(again.outcome, .alreadyGranted, file: file, line: line)
            XCTAssertEqual(again.newBalance, 415, file: file, line: line)
            try await cluster.assertPointsInvariants(users: [user], file: file, line: line)
        }
    }

    // MARK: Refunds while PointsService is down

    func testRefundWhileAGrantThatLandedIsStillOwedEndsRefunded() async throws {
        try await refundWhileGrantOwed(
            pointsFault: "points.grant_after_commit", expectedStatus: "refunded", purchaseRows: 1, refundRows: 1)
    }

    func testRefundWhileAGrantThatNeverLandedIsOwedEndsRefundedWithNothingKept() async throws {
        // Whether the grant landed is unknown to PaymentsService: it completes
        // the grant, then takes it back (never assumes it did not run).
        try await refundWhileGrantOwed(
            pointsFault: "points.grant_before_commit", expectedStatus: "refunded", purchaseRows: 1, refundRows: 1)
    }

    /// PointsService dies during the grant; Apple's REFUND arrives while the
    /// grant is owed; once PointsService is back the saga must end with the
    /// purchase taken back, never credited for good.
    private func refundWhileGrantOwed(
        pointsFault: String, expectedStatus: String, purchaseRows: Int64, refundRows: Int64,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        try await withCluster(pointsFaults: pointsFault) { cluster in
            let user = UUID()
            let transactionId = PaymentsCluster.randomTransactionId()
            await expectRPCError(.unavailable, reason: "POINTS_UNAVAILABLE", file: file, line: line) {
                _ = try await cluster.verify(
                    try cluster.verifyRequest(user: user, productCode: "popular_pack", transactionId: transactionId))
            }
            let exited = try await cluster.points.waitForExit()
            XCTAssertTrue(exited, file: file, line: line)
            let answer = try await cluster.notify(try cluster.signedRefund(transactionId, productCode: "popular_pack"))
            XCTAssertEqual(answer.outcome, "clawback_scheduled", file: file, line: line)
            let owed = try await cluster.row(transactionId)
            XCTAssertEqual(
                owed?.pendingAction, "grant", "the grant is completed first, then taken back", file: file, line: line)

            try await cluster.startPoints()
            let settled = try await cluster.waitSettled(transactionId, status: expectedStatus)
            XCTAssertTrue(settled, "ended \(expectedStatus)", file: file, line: line)
            let purchases = try await cluster.purchaseRows(transactionId)
            XCTAssertEqual(purchases, purchaseRows, file: file, line: line)
            let refunds = try await cluster.refundRows(transactionId)
            XCTAssertEqual(refunds, refundRows, file: file, line: line)
            let account = try await cluster.balance(user)
            XCTAssertEqual(account.balance, 0, file: file, line: line)
            await expectRPCError(.failedPrecondition, reason: "TRANSACTION_REVOKED", file: file, line: line) {
                _ = try await cluster.verify(
                    try cluster.verifyRequest(user: user, productCode: "popular_pack", transactionId: transactionId))
            }
            try await cluster.assertPointsInvariants(users: [user], file: file, line: line)
        }
    }

    func testRefundReversedWhileTheClawbackIsOwedTakesBackThenRestores() async throws {
        try await withCluster { cluster in
            let user = UUID()
            let transactionId = PaymentsCluster.randomTransactionId()
            _ = try await cluster.verify(
                try cluster.verifyRequest(user: user, productCode: "starter_pack", transactionId: transactionId))
            try await cluster.killPoints()
            _ = try await cluster.notify(try cluster.signedRefund(transactionId, productCode: "starter_pack"))
            let owed = try await cluster.row(transactionId)
            XCTAssertEqual(owed?.pendingAction, "clawback")
            let reversed = try await cluster.notify(
                try cluster.signedNotification(
                    "REFUND_REVERSED",
                    signedTransactionInfo: try cluster.signedTransaction(transactionId, productCode: "starter_pack")))
            // The clawback may have run before PointsService died: it is
            // completed, then reversed, never assumed away.
            XCTAssertEqual(reversed.outcome, "restore_scheduled")
            try await cluster.startPoints()
            let settled = try await cluster.waitSettled(transactionId, status: "granted")
            XCTAssertTrue(settled)
            let purchases = try await cluster.purchaseRows(transactionId)
            XCTAssertEqual(purchases, 1)
            let refunds = try await cluster.refundRows(transactionId)
            XCTAssertEqual(refunds, 1)
            let reversals = try await cluster.ledgerCount(event: "refund_reversed.apple_iap:\(transactionId)")
            XCTAssertEqual(reversals, 1)
            let account = try await cluster.balance(user)
            XCTAssertEqual(account.balance, 100)
            try await cluster.assertPointsInvariants(users: [user])
        }
    }

    // MARK: PostgreSQL outage under load

    /// What one verify of the load answered.
    private enum Answer: Sendable {
        case granted
        case failed(String)
    }

    func testDatabaseOutageUnderLoadEndsWithEveryPurchaseGrantedExactlyOnce() async throws {
        try await withCluster { cluster in
            let products = ["starter_pack", "popular_pack", "premium_pack"]
            let users = (0..<5).map { _ in UUID() }
            // 50 distinct transactions, 10 per user, each user's sent in order by one task.
            let plan: [[(id: String, product: String)]] = users.indices.map { userIndex in
                (0..<10).map { index in
                    (PaymentsCluster.randomTransactionId(), products[(userIndex + index) % products.count])
                }
            }
            var restarted = false
            defer { if !restarted { _ = try? Command.pg("start") } }
            // Each task sends 3 verifies, then waits for the outage to begin,
            // so the rest certainly meet a stopped (or restarting) database.
            let outage = OutageGate()
            let answers = try await withThrowingTaskGroup(of: [(String, Answer)].self) { group in
                for (userIndex, user) in users.enumerated() {
                    group.addTask {
                        var answers: [(String, Answer)] = []
                        for (index, (transactionId, product)) in plan[userIndex].enumerated() {
                            if index == 3 { await outage.waitUntilOpen() }
                            do {
                                let response = try await cluster.verify(
                                    try cluster.verifyRequest(
                                        user: user, productCode: product, transactionId: transactionId))
                                answers.append(
                                    (
                                        transactionId,
                                        response.outcome == .granted ? .granted : .failed("outcome \(response.outcome)")
                                    ))
                            } catch let error as RPCError {
                                answers.append(
                                    (transactionId, .failed(ErrorReason.reason(of: error) ?? "\(error.code)")))
                            }
                            try await Task.sleep(for: .milliseconds(40))
                        }
                        return answers
                    }
                }
                // The outage, while the load runs.
                try await Task.sleep(for: .milliseconds(150))
                let stopped = try await Command.pgOffPool("stop")
                await outage.open()
                XCTAssertEqual(stopped, 0, "pg.sh stop")
                try await Task.sleep(for: .seconds(1))
                let started = try await Command.pgOffPool("start")
                XCTAssertEqual(started, 0, "pg.sh start")
                restarted = true
                return try await group.reduce(into: [String: Answer]()) { all, part in
                    for (id, answer) in part { all[id] = answer }
                }
            }
            XCTAssertEqual(answers.count, 50)
            let failures = answers.values.compactMap { if case .failed(let reason) = $0 { reason } else { nil } }
            print("outage load: \(50 - failures.count) granted, failures \(failures)")
            XCTAssertFalse(failures.isEmpty, "verifies sent during the outage fail (retryably)")
            XCTAssertTrue(
                failures.allSatisfy { ["DATABASE_UNAVAILABLE", "POINTS_UNAVAILABLE", "unavailable"].contains($0) },
                "\(failures)")

            // The app resubmits what failed (as StoreKit redelivers unfinished
            // transactions), bounded; every purchase then ends credited.
            for (userIndex, user) in users.enumerated() {
                for (transactionId, product) in plan[userIndex] {
                    guard case .failed = answers[transactionId] else { continue }
                    var credited = false
                    for _ in 0..<50 where !credited {
                        do {
                            _ = try await cluster.verify(
                                try cluster.verifyRequest(
                                    user: user, productCode: product, transactionId: transactionId))
                            credited = true
                        } catch let error as RPCError where error.code == .unavailable {
                            try await Task.sleep(for: .milliseconds(100))
                        }
                    }
                    XCTAssertTrue(credited, "resubmitted \(transactionId) after the outage")
                }
            }

            // The worker catches up: nothing stays pending.
            let transactions = plan.flatMap { $0 }
            let caughtUp = try await cluster.eventually(timeout: .seconds(30)) {
                try await cluster.paymentsDatabase.withConnection {
                    try await $0.query(
                        "select count(*) as n from apple_iap_transactions where pending_action is not null"
                    ).first!.int64("n") == 0
                }
            }
            XCTAssertTrue(caughtUp, "every owed grant ran after the outage")
            for (userIndex, user) in users.enumerated() {
                var expectedBalance: Int64 = 0
                for (transactionId, product) in plan[userIndex] {
                    try await cluster.assertGrantedOnce(transactionId, user: user, productCode: product)
                    expectedBalance += PaymentsCluster.credits[product]!
                }
                let account = try await cluster.balance(user)
                XCTAssertEqual(account.balance, expectedBalance)
            }
            XCTAssertEqual(transactions.count, 50)
            try await cluster.assertPointsInvariants(users: users)
        }
    }
}

/// Opened once the database is down; load tasks wait on it.
private actor OutageGate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }

    func waitUntilOpen() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }
}
