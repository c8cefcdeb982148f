import Contracts
import Foundation
import PostgresClient
import TestSupport
import XCTest

/// The reconciliation jobs against the App Store stand-in through the real
/// services: a row stuck `received` is settled once Apple's view names its
/// owner, and a refund whose notification never came is found by the
/// revoked sweep and clawed back once.
final class PaymentsReconcileJobsTests: XCTestCase {
    static let shared = SharedFixture<AppStoreSyncFixture>(
        start: {
            try await AppStoreSyncFixture.start(jobs: [
                "RECONCILE_INTERVAL_SECONDS": "1", "RECONCILE_STUCK_AFTER_SECONDS": "1",
                "REVOKED_SWEEP_INTERVAL_SECONDS": "1",
            ])
        }, shutdown: { await $0.shutdown() })

    override class func tearDown() {
        shared.shutdownBlocking()
        super.tearDown()
    }

    private func fixture() async throws -> AppStoreSyncFixture { try await Self.shared.value() }

    func testARowStuckReceivedIsCreditedOnceApplesViewNamesItsOwner() async throws {
        let fixture = try await fixture()
        let cluster = fixture.cluster
        let user = UUID()
        let token = try await cluster.accountToken(user)
        let transactionId = PaymentsCluster.randomTransactionId()
        // Bought outside the app (an offer code): no appAccountToken, so received.
        let notified = try await cluster.notify(
            try cluster.signedOneTimeCharge(
                transactionId, productCode: "popular_pack", appAccountToken: nil,
                environment: "Production"))
        XCTAssertEqual(notified.outcome, "received_no_account_token")
        try await fixture.standIn.add(
            environment: "Production",
            transactions: [
                AppStoreSyncFixture.transaction(
                    transactionId, productCode: "popular_pack", token: nil, customer: "c-\(user)")
            ])
        // Asked about once stuck, but Apple's view names nobody yet.
        let asked = try await cluster.eventually {
            try await !fixture.requests("/inApps/v1/transactions/\(transactionId)").isEmpty
        }
        XCTAssertTrue(asked)
        let still = try await cluster.status(transactionId)
        XCTAssertEqual(still, "received")
        // Support sets the user's token on it (Set App Account Token): the next look credits it.
        try await fixture.standIn.add(
            environment: "Production",
            transactions: [
                AppStoreSyncFixture.transaction(
                    transactionId, productCode: "popular_pack", token: token, customer: "c-\(user)")
            ])
        let credited = try await cluster.waitSettled(transactionId, status: "granted", timeout: .seconds(30))
        XCTAssertTrue(credited)
        try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "popular_pack")
        // Not stuck any more: no more questions about it, nothing else moves.
        let calls = try await fixture.requests("/inApps/v1/transactions/\(transactionId)").count
        try await Task.sleep(for: .seconds(2))
        let callsLater = try await fixture.requests("/inApps/v1/transactions/\(transactionId)").count
        XCTAssertEqual(callsLater, calls)
        try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "popular_pack")
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testTheRevokedSweepClawsBackARefundWhoseNotificationNeverCame() async throws {
        let fixture = try await fixture()
        let cluster = fixture.cluster
        let user = UUID()
        let token = try await cluster.accountToken(user)
        let kept = PaymentsCluster.randomTransactionId(), refunded = PaymentsCluster.randomTransactionId()
        for (transactionId, product) in [(kept, "starter_pack"), (refunded, "premium_pack")] {
            let signed = try cluster.signedTransaction(
                transactionId, productCode: product, appAccountToken: token, environment: "Production")
            let verify = try await cluster.verify(
                try cluster.verifyRequest(
                    user: user, productCode: product, transactionId: transactionId,
                    signed: signed, appAccountToken: token))
            XCTAssertEqual(verify.outcome, .granted)
        }
        try await fixture.standIn.add(
            environment: "Production",
            transactions: [
                AppStoreSyncFixture.transaction(
                    kept, productCode: "starter_pack", token: token, customer: "c-\(user)",
                    purchasedAgoMilliseconds: 120_000),
                AppStoreSyncFixture.transaction(
                    refunded, productCode: "premium_pack", token: token, customer: "c-\(user)", revoked: true),
            ])
        let clawedBack = try await cluster.waitSettled(refunded, status: "refunded", timeout: .seconds(30))
        XCTAssertTrue(clawedBack)
        // More sweeps: still once.
        let sweeps = try await fixture.requests("/inApps/v2/history/").count
        let more = try await cluster.eventually {
            try await fixture.requests("/inApps/v2/history/").count >= sweeps + 2
        }
        XCTAssertTrue(more)
        let purchases = try await cluster.purchaseRows(refunded)
        let refunds = try await cluster.refundRows(refunded)
        XCTAssertEqual(purchases, 1)
        XCTAssertEqual(refunds, 1)
        try await cluster.assertGrantedOnce(kept, user: user, productCode: "starter_pack")
        let balance = try await cluster.balance(user)
        XCTAssertEqual(balance.balance, 100)
        // The sweep asked for revoked consumables only, from its lookback.
        let query = try await fixture.requests("/inApps/v2/history/").last?["query"] as? String ?? ""
        XCTAssertTrue(query.contains("revoked=true"), query)
        XCTAssertTrue(query.contains("productType=CONSUMABLE"), query)
        XCTAssertTrue(query.contains("startDate="), query)
        XCTAssertTrue(query.contains("sort=DESCENDING"), query)
        try await cluster.assertPointsInvariants(users: [user])
        fixture.assertNoSecrets(in: cluster.paymentsLogs)
    }

    /// A user whose history Apple refuses for good (a 400 on every read) is
    /// logged and skipped: the users after it are still swept, and a refund
    /// of theirs whose notification never came is still clawed back.
    func testTheRevokedSweepSkipsAUserWhoseHistoryCannotBeReadAndGoesOn() async throws {
        let fixture = try await fixture()
        let cluster = fixture.cluster
        // The sweep goes through users by id: the unreadable one first.
        func user(_ prefix: String) throws -> UUID {
            try XCTUnwrap(UUID(uuidString: prefix + String(UUID().uuidString.suffix(12))))
        }
        let unreadable = try user("00000000-0000-4000-8000-"), later = try user("ffffffff-ffff-4fff-bfff-")
        let bought = [unreadable: PaymentsCluster.randomTransactionId(), later: PaymentsCluster.randomTransactionId()]
        let unreadableTransaction = try XCTUnwrap(bought[unreadable]), laterTransaction = try XCTUnwrap(bought[later])
        let unreadablePath = "/inApps/v2/history/\(unreadableTransaction)"
        try await fixture.standIn.fault(
            ["kind": "status", "status": 400, "errorCode": 4000006], match: unreadablePath,
            environment: "Production", count: 100_000)
        for (owner, transactionId) in [(unreadable, unreadableTransaction), (later, laterTransaction)] {
            let token = try await cluster.accountToken(owner)
            let signed = try cluster.signedTransaction(
                transactionId, productCode: "premium_pack", appAccountToken: token, environment: "Production")
            let verify = try await cluster.verify(
                try cluster.verifyRequest(
                    user: owner, productCode: "premium_pack", transactionId: transactionId,
                    signed: signed, appAccountToken: token))
            XCTAssertEqual(verify.outcome, .granted)
            try await fixture.standIn.add(
                environment: "Production",
                transactions: [
                    AppStoreSyncFixture.transaction(
                        transactionId, productCode: "premium_pack", token: token, customer: "c-\(owner)", revoked: true)
                ])
        }
        let clawedBack = try await cluster.waitSettled(laterTransaction, status: "refunded", timeout: .seconds(30))
        XCTAssertTrue(clawedBack, "the user after the unreadable one is swept")
        let refunds = try await cluster.refundRows(laterTransaction)
        XCTAssertEqual(refunds, 1)
        // The unreadable user was asked about, and stays as it was.
        let asked = try await fixture.requests(unreadablePath)
        XCTAssertFalse(asked.isEmpty)
        let untouched = try await cluster.status(unreadableTransaction)
        XCTAssertEqual(untouched, "granted")
        XCTAssertTrue(cluster.paymentsLogs.contains("revoked sweep skipped a user whose history cannot be read"))
        try await cluster.assertPointsInvariants(users: [unreadable, later])
    }
}
