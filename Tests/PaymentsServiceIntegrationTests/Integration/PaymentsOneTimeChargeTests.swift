import Contracts
import Foundation
import PostgresClient
import XCTest

/// ONE_TIME_CHARGE through the real services: a consumable the app never
/// submits is credited once when its transaction carries the user's
/// appAccountToken, and left `received` otherwise (no token, a token this
/// service never issued, a starter pack, a Sandbox purchase this deployment
/// does not credit), each for the app's later verify to settle.
final class PaymentsOneTimeChargeTests: XCTestCase {
    /// Listed in APPLE_SANDBOX_USER_IDS (App Review / a tester).
    static let tester = UUID(uuidString: "7c9e6679-7425-40de-944b-e07fc1f90ae7")!
    static let shared = SharedCluster {
        try await PaymentsCluster.start(
            environments: "Production,Sandbox", appAppleId: "1234", sandboxUserIds: tester.uuidString)
    }

    override class func tearDown() {
        shared.shutdownBlocking()
        super.tearDown()
    }

    private func cluster() async throws -> PaymentsCluster { try await Self.shared.cluster() }

    /// A Production ONE_TIME_CHARGE of `productCode` that Apple reported
    /// with a new user's appAccountToken, and the notification's outcome.
    private func tokenedOneTimeCharge(_ productCode: String, in cluster: PaymentsCluster)
        async throws -> (user: UUID, token: String, transactionId: String, outcome: String)
    {
        let user = UUID()
        let token = try await cluster.accountToken(user)
        let transactionId = PaymentsCluster.randomTransactionId()
        let answer = try await cluster.notify(
            try cluster.signedOneTimeCharge(
                transactionId, productCode: productCode, appAccountToken: token,
                environment: "Production"))
        return (user, token, transactionId, answer.outcome)
    }

    /// A starter pack so reported: recorded, its grant waiting for the app's verify.
    private func waitingStarterPack(in cluster: PaymentsCluster) async throws -> (
        user: UUID, token: String, transactionId: String
    ) {
        let charge = try await tokenedOneTimeCharge("new_user_pack", in: cluster)
        XCTAssertEqual(charge.outcome, "received_starter_pack_needs_app")
        return (charge.user, charge.token, charge.transactionId)
    }

    func testOneTimeChargeWithTheUsersTokenCreditsOnceAndTheAppsVerifyIsAlreadyGranted() async throws {
        let cluster = try await cluster()
        let user = UUID()
        let token = try await cluster.accountToken(user)
        let transactionId = PaymentsCluster.randomTransactionId()
        let uuid = UUID()
        let notification = try cluster.signedOneTimeCharge(
            transactionId, productCode: "popular_pack", appAccountToken: token, quantity: 2,
            environment: "Production", uuid: uuid)
        let answer = try await cluster.notify(notification)
        XCTAssertEqual(answer.outcome, "grant_scheduled")
        XCTAssertFalse(answer.duplicate)
        // Run inline by the notification (the insert leased the row to it), or by the worker.
        let settled = try await cluster.waitSettled(transactionId, status: "granted")
        XCTAssertTrue(settled)
        try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "popular_pack", quantity: 2)
        let balance = try await cluster.balance(user)
        XCTAssertEqual(balance.balance, 420)

        // Apple redelivers it: nothing changes.
        let again = try await cluster.notify(notification)
        XCTAssertTrue(again.duplicate)
        XCTAssertEqual(again.outcome, "grant_scheduled")
        // Another notification about the same transaction (a second path): nothing changes.
        let other = try await cluster.notify(
            try cluster.signedOneTimeCharge(
                transactionId, productCode: "popular_pack", appAccountToken: token, quantity: 2,
                environment: "Production"))
        XCTAssertEqual(other.outcome, "already_claimed")

        // The app submits it later (it was never finished): already granted.
        let signed = try cluster.signedTransaction(
            transactionId, productCode: "popular_pack", appAccountToken: token, environment: "Production",
            quantity: 2)
        let verify = try await cluster.verify(
            try cluster.verifyRequest(
                user: user, productCode: "popular_pack", transactionId: transactionId,
                signed: signed, appAccountToken: token))
        XCTAssertEqual(verify.outcome, .alreadyGranted)
        XCTAssertEqual(verify.creditsAdded, 0)
        XCTAssertEqual(verify.newBalance, 420)
        let transaction = try await cluster.transaction(user, transactionId)
        XCTAssertEqual(transaction.status, .granted)
        XCTAssertEqual(transaction.credits, 420)
        XCTAssertEqual(transaction.quantity, 2)
        try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "popular_pack", quantity: 2)
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testOneTimeChargeWithoutAKnownTokenIsRecordedReceivedForTheApp() async throws {
        let cluster = try await cluster()
        let user = UUID()
        let withoutToken = PaymentsCluster.randomTransactionId()
        let noToken = try await cluster.notify(
            try cluster.signedOneTimeCharge(
                withoutToken, productCode: "premium_pack", appAccountToken: nil,
                environment: "Production"))
        XCTAssertEqual(noToken.outcome, "received_no_account_token")
        let strangerToken = PaymentsCluster.randomTransactionId()
        let unknown = try await cluster.notify(
            try cluster.signedOneTimeCharge(
                strangerToken, productCode: "premium_pack",
                appAccountToken: UUID().uuidString.lowercased(), environment: "Production"))
        XCTAssertEqual(unknown.outcome, "received_unknown_account_token")
        for transactionId in [withoutToken, strangerToken] {
            let row = try await cluster.row(transactionId)
            XCTAssertEqual(row?.status, "received")
            XCTAssertNil(row?.userId)
            XCTAssertNil(row?.pendingAction)
            let purchases = try await cluster.purchaseRows(transactionId)
            XCTAssertEqual(purchases, 0)
        }
        // The app's verify credits the one without a token, once.
        let signed = try cluster.signedTransaction(withoutToken, productCode: "premium_pack", environment: "Production")
        let verify = try await cluster.verify(
            try cluster.verifyRequest(
                user: user, productCode: "premium_pack", transactionId: withoutToken, signed: signed))
        XCTAssertEqual(verify.outcome, .granted)
        XCTAssertEqual(verify.creditsAdded, 415)
        try await cluster.assertGrantedOnce(withoutToken, user: user, productCode: "premium_pack")
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testStarterPackWaitsForTheAppsVerifyAndItsEmailIdentity() async throws {
        let cluster = try await cluster()
        let (user, token, transactionId) = try await waitingStarterPack(in: cluster)
        let row = try await cluster.row(transactionId)
        XCTAssertEqual(row?.status, "received")
        XCTAssertEqual(row?.userId, user.uuidString.lowercased(), "the owner is known through the token")
        let ledger = try await cluster.ledgerRows(user: user)
        XCTAssertEqual(ledger, 0)
        // The app's verify brings the email identity the starter pack needs.
        let hash = PaymentsCluster.randomEmailHash()
        let signed = try cluster.signedTransaction(
            transactionId, productCode: "new_user_pack", appAccountToken: token, environment: "Production")
        let verify = try await cluster.verify(
            try cluster.verifyRequest(
                user: user, emailHash: hash, productCode: "new_user_pack",
                transactionId: transactionId, signed: signed, appAccountToken: token))
        XCTAssertEqual(verify.outcome, .granted)
        XCTAssertEqual(verify.creditsAdded, 60)
        try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "new_user_pack")
        try await cluster.assertPointsInvariants(users: [user])
    }

    /// The app's verify brings what a waiting starter pack's grant needs, so
    /// its answer is `granted` with the credits even when another runner
    /// applies the grant: here the worker, once a lease another instance
    /// holds on the row (set by a trigger at the moment the verify makes the
    /// grant owed) has passed.
    func testTheVerifyThatClaimsAWaitingStarterPackIsGrantedWhoeverRunsTheGrant() async throws {
        let cluster = try await cluster()
        let (user, token, transactionId) = try await waitingStarterPack(in: cluster)
        let trigger = "lease_elsewhere_\(transactionId)"
        try await cluster.paymentsDatabase.withConnection { connection in
            _ = try await connection.query(
                """
                create or replace function test_lease_elsewhere() returns trigger language plpgsql as $$
                begin new.next_attempt_at := now() + interval '400 milliseconds'; return new; end $$
                """)
            _ = try await connection.query(
                """
                create trigger \(trigger) before update on apple_iap_transactions for each row
                when (new.transaction_id = '\(transactionId)' and old.pending_action is null and new.pending_action is not null)
                execute function test_lease_elsewhere()
                """)
        }
        let signed = try cluster.signedTransaction(
            transactionId, productCode: "new_user_pack", appAccountToken: token, environment: "Production")
        let verify = try await cluster.verify(
            try cluster.verifyRequest(
                user: user, emailHash: PaymentsCluster.randomEmailHash(),
                productCode: "new_user_pack", transactionId: transactionId,
                signed: signed, appAccountToken: token))
        try await cluster.paymentsDatabase.withConnection {
            _ = try await $0.query("drop trigger \(trigger) on apple_iap_transactions")
        }
        XCTAssertEqual(verify.outcome, .granted)
        XCTAssertEqual(verify.creditsAdded, 60)
        let lines = cluster.paymentsLogs.split(separator: "\n").filter { $0.contains(transactionId) }
        XCTAssertTrue(
            lines.contains { $0.contains("transaction granted by another runner") }, "the worker ran the grant")
        try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "new_user_pack")
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testOneTimeChargeOfAProductTheCatalogLacksIsReceivedAndAlerted() async throws {
        let cluster = try await cluster()
        let (user, _, transactionId, outcome) = try await tokenedOneTimeCharge("gold_pack", in: cluster)
        XCTAssertEqual(outcome, "received_product_not_in_catalog")
        let row = try await cluster.row(transactionId)
        XCTAssertEqual(row?.status, "received")
        XCTAssertEqual(row?.userId, user.uuidString.lowercased())
        XCTAssertTrue(cluster.paymentsLogs.contains("\"alert\":\"catalog_missing_product\""))
        let rows = try await cluster.ledgerRows(user: user)
        XCTAssertEqual(rows, 0)
    }

    /// PointsService down and a fresh PaymentsService (no catalog cached):
    /// a ONE_TIME_CHARGE carrying a user's token cannot be claimed, so it is
    /// answered retryable and nothing is written; Apple's redelivery once
    /// the catalog can be read credits it once.
    func testOneTimeChargeWhileTheCatalogCannotBeReadIsAnsweredRetryableAndWritesNothing() async throws {
        let cluster = try await PaymentsCluster.start(environments: "Production", appAppleId: "1234")
        addTeardownBlock { await cluster.shutdown() }
        let user = UUID()
        let token = try await cluster.accountToken(user)
        try await cluster.killPoints()
        try await cluster.killPayments()
        try await cluster.startPayments()
        let transactionId = PaymentsCluster.randomTransactionId()
        let uuid = UUID()
        let notification = try cluster.signedOneTimeCharge(
            transactionId, productCode: "popular_pack", appAccountToken: token,
            environment: "Production", uuid: uuid)
        await expectRPCError(.unavailable, reason: "POINTS_UNAVAILABLE") { _ = try await cluster.notify(notification) }
        let row = try await cluster.row(transactionId)
        XCTAssertNil(row, "nothing half-written")
        let recorded = try await cluster.paymentsDatabase.withConnection {
            try await $0.query(
                "select count(*) as n from apple_notifications where notification_uuid = $1::uuid", [.uuid(uuid)]
            ).first!.int64("n")
        }
        XCTAssertEqual(
            recorded, 0, "the notification is rolled back with its effect, so Apple's retry is not a duplicate")

        try await cluster.startPoints()
        // Apple redelivers until it gets 200 (PaymentsService reconnects to PointsService meanwhile).
        var redelivered: HandleNotificationResponse?
        let delivered = try await cluster.eventually {
            redelivered = try? await cluster.notify(notification)
            return redelivered != nil
        }
        XCTAssertTrue(delivered)
        XCTAssertEqual(redelivered?.outcome, "grant_scheduled")
        XCTAssertEqual(redelivered?.duplicate, false)
        let settled = try await cluster.waitSettled(transactionId, status: "granted")
        XCTAssertTrue(settled)
        try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "popular_pack")
    }

    func testSandboxOneTimeChargeIsCreditedOnlyForListedUsersNextToProduction() async throws {
        let cluster = try await cluster()
        let unlisted = UUID()
        let unlistedToken = try await cluster.accountToken(unlisted)
        let refused = PaymentsCluster.randomTransactionId()
        let answer = try await cluster.notify(
            try cluster.signedOneTimeCharge(refused, productCode: "starter_pack", appAccountToken: unlistedToken))
        XCTAssertEqual(answer.outcome, "received_environment_not_credited")
        let status = try await cluster.status(refused)
        XCTAssertEqual(status, "received")
        let unlistedRows = try await cluster.ledgerRows(user: unlisted)
        XCTAssertEqual(unlistedRows, 0)

        let testerToken = try await cluster.accountToken(Self.tester)
        let credited = PaymentsCluster.randomTransactionId()
        let testerAnswer = try await cluster.notify(
            try cluster.signedOneTimeCharge(credited, productCode: "starter_pack", appAccountToken: testerToken))
        XCTAssertEqual(testerAnswer.outcome, "grant_scheduled")
        let settled = try await cluster.waitSettled(credited, status: "granted")
        XCTAssertTrue(settled)
        try await cluster.assertGrantedOnce(credited, user: Self.tester, productCode: "starter_pack")
        try await cluster.assertPointsInvariants(users: [unlisted, Self.tester])
    }

    func testRefundAfterOneTimeChargeClawsBackOnce() async throws {
        let cluster = try await cluster()
        let (user, token, transactionId, _) = try await tokenedOneTimeCharge("popular_pack", in: cluster)
        let granted = try await cluster.waitSettled(transactionId, status: "granted")
        XCTAssertTrue(granted)
        let refund = try cluster.signedNotification(
            "REFUND",
            signedTransactionInfo: try cluster.signedTransaction(
                transactionId, productCode: "popular_pack", appAccountToken: token, revocationReason: 0,
                environment: "Production"),
            environment: "Production")
        let answer = try await cluster.notify(refund)
        XCTAssertEqual(answer.outcome, "clawback_scheduled")
        let refunded = try await cluster.waitSettled(transactionId, status: "refunded")
        XCTAssertTrue(refunded)
        let purchases = try await cluster.purchaseRows(transactionId)
        let refunds = try await cluster.refundRows(transactionId)
        XCTAssertEqual(purchases, 1)
        XCTAssertEqual(refunds, 1)
        let balance = try await cluster.balance(user)
        XCTAssertEqual(balance.balance, 0)
        try await cluster.assertPointsInvariants(users: [user])
    }
}
