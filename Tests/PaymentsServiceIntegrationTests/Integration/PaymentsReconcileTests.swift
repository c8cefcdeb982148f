import Contracts
import Foundation
import StrictJSON
import XCTest

/// `PaymentsService reconcile` against the App Store stand-in through the
/// real services: Apple's view (Get Transaction Info, the customer's
/// history) recorded through the same model, once, whatever other path
/// (ONE_TIME_CHARGE, the app's verify) reaches the same transaction.
final class PaymentsReconcileTests: XCTestCase {
    static let shared = SharedFixture<AppStoreSyncFixture>(
        start: { try await AppStoreSyncFixture.start() }, shutdown: { await $0.shutdown() })

    override class func tearDown() {
        shared.shutdownBlocking()
        super.tearDown()
    }

    private func fixture() async throws -> AppStoreSyncFixture { try await Self.shared.value() }

    private func reconcile(
        _ fixture: AppStoreSyncFixture, _ arguments: [String], logLevel: String = "debug",
        file: StaticString = #filePath, line: UInt = #line
    ) async throws -> (status: Int32, report: JSONValue) {
        let result = try await fixture.cluster.paymentsCommand(
            ["reconcile"] + arguments, settings: ["LOG_LEVEL": logLevel])
        fixture.assertNoSecrets(in: result.errors + result.output, file: file, line: line)
        let report = try StrictJSONParser().parse(Array(result.output.utf8))
        return (result.status, report)
    }

    private func only(_ report: JSONValue) -> JSONValue? {
        guard case .array(let items)? = report["transactions"], items.count == 1 else { return nil }
        return items[0]
    }

    func testAPurchaseTheAppNeverSubmitsIsCreditedOnceByReconciliationAndASecondPathChangesNothing() async throws {
        let fixture = try await fixture()
        let cluster = fixture.cluster
        let user = UUID()
        let token = try await cluster.accountToken(user)
        let transactionId = PaymentsCluster.randomTransactionId()
        try await fixture.standIn.add(
            environment: "Production",
            transactions: [
                AppStoreSyncFixture.transaction(
                    transactionId, productCode: "popular_pack", token: token, quantity: 2, customer: "c-\(user)")
            ])

        let first = try await reconcile(fixture, ["--transaction-id", transactionId])
        XCTAssertEqual(first.status, 0)
        let item = only(first.report)
        XCTAssertEqual(item?["result"], .string("recorded"))
        XCTAssertEqual(item?["environment"], .string("Production"))
        XCTAssertEqual(item?["claim"], .string("claimed_through_app_account_token"))
        XCTAssertEqual(item?["before"], .null)
        XCTAssertEqual(item?["after"]?["status"], .string("granted"))
        try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "popular_pack", quantity: 2)

        // Again: Apple's word is newer but says the same; nothing moves.
        let again = try await reconcile(fixture, ["--transaction-id", transactionId])
        XCTAssertEqual(again.status, 0)
        XCTAssertEqual(only(again.report)?["before"]?["status"], .string("granted"))
        // The notification arrives after all (a second path): already claimed.
        let notified = try await cluster.notify(
            try cluster.signedOneTimeCharge(
                transactionId, productCode: "popular_pack", appAccountToken: token, quantity: 2,
                environment: "Production"))
        XCTAssertEqual(notified.outcome, "already_claimed")
        // And the app submits it: already granted.
        let signed = try cluster.signedTransaction(
            transactionId, productCode: "popular_pack", appAccountToken: token, environment: "Production",
            quantity: 2)
        let verify = try await cluster.verify(
            try cluster.verifyRequest(
                user: user, productCode: "popular_pack", transactionId: transactionId,
                signed: signed, appAccountToken: token))
        XCTAssertEqual(verify.outcome, .alreadyGranted)
        try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "popular_pack", quantity: 2)
        let balance = try await cluster.balance(user)
        XCTAssertEqual(balance.balance, 420)

        // The stand-in saw the documented JWT on each call, production only.
        let calls = try await fixture.requests("/inApps/v1/transactions/\(transactionId)")
        XCTAssertEqual(calls.count, 2)
        XCTAssertTrue(calls.allSatisfy { $0["env"] as? String == "Production" && $0["jwtValid"] as? Bool == true })
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testARefundWhoseNotificationWasLostIsClawedBackOnceByReconciliation() async throws {
        let fixture = try await fixture()
        let cluster = fixture.cluster
        let user = UUID()
        let transactionId = PaymentsCluster.randomTransactionId()
        let signed = try cluster.signedTransaction(
            transactionId, productCode: "premium_pack", environment: "Production")
        let verify = try await cluster.verify(
            try cluster.verifyRequest(
                user: user, productCode: "premium_pack", transactionId: transactionId, signed: signed))
        XCTAssertEqual(verify.outcome, .granted)
        // Apple refunded it; the REFUND notification never arrived.
        try await fixture.standIn.add(
            environment: "Production",
            transactions: [
                AppStoreSyncFixture.transaction(
                    transactionId, productCode: "premium_pack", token: nil, customer: "c-\(user)", revoked: true)
            ])
        let first = try await reconcile(fixture, ["--transaction-id", transactionId])
        XCTAssertEqual(first.status, 0)
        XCTAssertEqual(only(first.report)?["before"]?["status"], .string("granted"))
        XCTAssertEqual(only(first.report)?["after"]?["status"], .string("refunded"))
        let again = try await reconcile(fixture, ["--transaction-id", transactionId])
        XCTAssertEqual(again.status, 0)
        XCTAssertEqual(only(again.report)?["after"]?["status"], .string("refunded"))
        let purchases = try await cluster.purchaseRows(transactionId)
        let refunds = try await cluster.refundRows(transactionId)
        XCTAssertEqual(purchases, 1)
        XCTAssertEqual(refunds, 1)
        let balance = try await cluster.balance(user)
        XCTAssertEqual(balance.balance, 0)
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testAnUnknownIdIsLookedUpInProductionThenSandbox() async throws {
        let fixture = try await fixture()
        let cluster = fixture.cluster
        let testerToken = try await cluster.accountToken(AppStoreSyncFixture.tester)
        let sandboxOnly = PaymentsCluster.randomTransactionId()
        let unlisted = UUID()
        let unlistedToken = try await cluster.accountToken(unlisted)
        let unlistedPurchase = PaymentsCluster.randomTransactionId()
        try await fixture.standIn.add(
            environment: "Sandbox",
            transactions: [
                AppStoreSyncFixture.transaction(
                    sandboxOnly, productCode: "starter_pack", token: testerToken, customer: "tester"),
                AppStoreSyncFixture.transaction(
                    unlistedPurchase, productCode: "starter_pack", token: unlistedToken, customer: "c-\(unlisted)"),
            ])
        let result = try await reconcile(fixture, ["--transaction-id", sandboxOnly])
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(only(result.report)?["environment"], .string("Sandbox"))
        try await cluster.assertGrantedOnce(sandboxOnly, user: AppStoreSyncFixture.tester, productCode: "starter_pack")
        let calls = try await fixture.requests("/inApps/v1/transactions/\(sandboxOnly)")
        XCTAssertEqual(
            calls.map { $0["env"] as? String }, ["Production", "Sandbox"], "production first, sandbox after its 404")
        XCTAssertEqual(calls.first?["status"] as? Int, 404)
        XCTAssertEqual(calls.last?["status"] as? Int, 200)

        // A Sandbox purchase of a user not on the allow-list: recorded, not credited.
        let refused = try await reconcile(fixture, ["--transaction-id", unlistedPurchase])
        XCTAssertEqual(only(refused.report)?["claim"], .string("environment_not_credited"))
        XCTAssertEqual(only(refused.report)?["after"]?["status"], .string("received"))
        let rows = try await cluster.ledgerRows(user: unlisted)
        XCTAssertEqual(rows, 0)

        // Unknown in both: said, exit 1, nothing written.
        let missing = PaymentsCluster.randomTransactionId()
        let unknown = try await reconcile(fixture, ["--transaction-id", missing])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertEqual(only(unknown.report)?["result"], .string("not_found_at_apple"))
        let row = try await cluster.row(missing)
        XCTAssertNil(row)
    }

    func testReconcilingAUserFindsAPurchaseOnlyApplesHistoryKnows() async throws {
        let fixture = try await fixture()
        let cluster = fixture.cluster
        let user = UUID()
        let token = try await cluster.accountToken(user)
        let known = PaymentsCluster.randomTransactionId(), unseen = PaymentsCluster.randomTransactionId()
        let customer = "c-\(user)"
        try await fixture.standIn.add(
            environment: "Production",
            transactions: [
                AppStoreSyncFixture.transaction(
                    known, productCode: "starter_pack", token: token, customer: customer,
                    purchasedAgoMilliseconds: 120_000),
                AppStoreSyncFixture.transaction(unseen, productCode: "premium_pack", token: token, customer: customer),
            ])
        let signed = try cluster.signedTransaction(
            known, productCode: "starter_pack", appAccountToken: token, environment: "Production")
        _ = try await cluster.verify(
            try cluster.verifyRequest(
                user: user, productCode: "starter_pack", transactionId: known, signed: signed,
                appAccountToken: token))
        let result = try await reconcile(fixture, ["--user-id", user.uuidString.lowercased()])
        XCTAssertEqual(result.status, 0, "\(result.report)")
        guard case .array(let items)? = result.report["transactions"] else { return XCTFail("transactions") }
        XCTAssertEqual(items.compactMap { $0["transaction_id"] }, [.string(known), .string(unseen)])
        XCTAssertEqual(items.last?["after"]?["status"], .string("granted"))
        try await cluster.assertGrantedOnce(known, user: user, productCode: "starter_pack")
        try await cluster.assertGrantedOnce(unseen, user: user, productCode: "premium_pack")
        let history = try await fixture.requests("/inApps/v2/history/\(known)")
        XCTAssertEqual(history.count, 1)
        XCTAssertTrue((history.first?["query"] as? String ?? "").contains("productType=CONSUMABLE"))
        XCTAssertTrue(
            (history.first?["query"] as? String ?? "").contains("sort=DESCENDING"),
            "newest first, in case the page bound cuts it")
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testUsageErrorsExitTwoAndTheServicesLogsHoldNoSecret() async throws {
        let fixture = try await fixture()
        let neither = try await fixture.cluster.paymentsCommand(["reconcile"])
        XCTAssertEqual(neither.status, 2)
        XCTAssertTrue(neither.errors.contains("--transaction-id or --user-id must be given, not both"), neither.errors)
        let bad = try await fixture.cluster.paymentsCommand(["reconcile", "--user-id", "not-a-uuid"])
        XCTAssertEqual(bad.status, 2)
        let noKey = try await fixture.cluster.paymentsCommand(
            ["reconcile", "--transaction-id", "2000000000000001"],
            settings: ["APPLE_API_KEY_PATH": "", "APPLE_API_KEY_ID": "", "APPLE_API_ISSUER_ID": ""])
        XCTAssertEqual(noKey.status, 2)
        XCTAssertTrue(noKey.errors.contains("this command calls the App Store Server API"), noKey.errors)
        // The commands that run saga steps read the service's lease and retry timing too.
        for command in [
            ["reconcile", "--transaction-id", "2000000000000001"], ["redrive", "--transaction-id", "2000000000000001"],
        ] {
            let badLease = try await fixture.cluster.paymentsCommand(command, settings: ["SAGA_LEASE_MS": "0"])
            XCTAssertEqual(badLease.status, 2, "\(command)")
            XCTAssertTrue(badLease.errors.contains("SAGA_LEASE_MS"), badLease.errors)
            let help = try await fixture.cluster.paymentsCommand([command[0], "--help"])
            XCTAssertTrue(help.output.contains("SAGA_LEASE_MS"), help.output)
        }
        fixture.assertNoSecrets(in: fixture.cluster.paymentsLogs)
    }
}
