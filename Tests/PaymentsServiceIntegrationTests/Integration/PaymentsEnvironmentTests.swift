import Contracts
import Foundation
import PostgresClient
import TestSupport
import XCTest

/// A deployment that accepts Production and Sandbox credits a Sandbox
/// (TestFlight, App Review) purchase only for the users in
/// APPLE_SANDBOX_USER_IDS; anyone else's is refused before anything is
/// written. A Sandbox-only (staging) deployment credits every user.
final class PaymentsEnvironmentTests: XCTestCase {
    static let reviewer = UUID()
    static let tester = UUID()
    static let shared = SharedCluster {
        try await PaymentsCluster.start(
            environments: "Production,Sandbox", appAppleId: "1234",
            sandboxUserIds: " \(reviewer.uuidString.lowercased()) ,\(tester.uuidString.uppercased())")
    }
    /// Staging: no Production; the allow-list, set anyway, restricts nothing.
    static let staging = SharedCluster {
        try await PaymentsCluster.start(environments: "Sandbox", sandboxUserIds: reviewer.uuidString)
    }

    override class func tearDown() {
        shared.shutdownBlocking()
        staging.shutdownBlocking()
        super.tearDown()
    }

    func testListedUsersSandboxPurchasesAreGranted() async throws {
        let cluster = try await Self.shared.cluster()
        for user in [Self.reviewer, Self.tester] {
            let transactionId = PaymentsCluster.randomTransactionId()
            let granted = try await cluster.verify(
                try cluster.verifyRequest(user: user, productCode: "popular_pack", transactionId: transactionId))
            XCTAssertEqual(granted.outcome, .granted)
            XCTAssertEqual(granted.creditsAdded, 210)
            let transaction = try await cluster.transaction(user, transactionId)
            XCTAssertEqual(transaction.environment, "Sandbox")
            try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "popular_pack")
        }
        try await cluster.assertPointsInvariants(users: [Self.reviewer, Self.tester])
    }

    func testUnlistedUsersSandboxPurchaseIsRefusedAndWritesNothing() async throws {
        let cluster = try await Self.shared.cluster()
        let user = UUID()
        let transactionId = PaymentsCluster.randomTransactionId()
        // A never-issued appAccountToken: were the token checked first, the
        // refusal would be TRANSACTION_CONFLICT after writing the user's token.
        let signed = try cluster.signedTransaction(
            transactionId, productCode: "starter_pack", appAccountToken: UUID().uuidString.lowercased())
        for _ in 0..<2 {
            let error = await expectRPCError(.failedPrecondition, reason: "ENVIRONMENT_NOT_ALLOWED") {
                _ = try await cluster.verify(
                    try cluster.verifyRequest(
                        user: user, productCode: "starter_pack", transactionId: transactionId, signed: signed))
            }
            XCTAssertEqual(error?.message, "purchases from the Sandbox environment are not credited by this deployment")
        }
        try await cluster.assertNothingWritten(transactionId, user: user)
        let tokens = try await cluster.paymentsDatabase.withConnection {
            try await $0.query("select count(*) as n from app_account_tokens where user_id = $1::uuid", [.uuid(user)])
                .first!.int64("n")
        }
        XCTAssertEqual(tokens, 0, "no account token was issued")
        let account = try await cluster.pointsDatabase.withConnection {
            try await $0.query("select count(*) as n from user_points where user_id = $1::uuid", [.uuid(user)]).first!
                .int64("n")
        }
        XCTAssertEqual(account, 0, "no points account was created")
        XCTAssertTrue(
            cluster.paymentsLogs.contains("user_not_in_sandbox_allow_list"), "the refusal is logged for operators")

        // The same user's Production purchase is credited as usual.
        let productionId = PaymentsCluster.randomTransactionId()
        let production = try cluster.signedTransaction(
            productionId, productCode: "starter_pack", environment: "Production")
        let granted = try await cluster.verify(
            try cluster.verifyRequest(
                user: user, productCode: "starter_pack", transactionId: productionId, signed: production))
        XCTAssertEqual(granted.outcome, .granted)
        try await cluster.assertGrantedOnce(productionId, user: user, productCode: "starter_pack")
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testSandboxOnlyDeploymentCreditsEveryUser() async throws {
        let cluster = try await Self.staging.cluster()
        let user = UUID()
        let transactionId = PaymentsCluster.randomTransactionId()
        let granted = try await cluster.verify(
            try cluster.verifyRequest(user: user, productCode: "premium_pack", transactionId: transactionId))
        XCTAssertEqual(granted.outcome, .granted)
        try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "premium_pack")
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testAMalformedAllowListStopsStartUpNamingTheEntry() async throws {
        let cluster = try await Self.staging.cluster()
        let settings = [
            "DATABASE_URL": cluster.paymentsURL, "POINTS_ADDR": "127.0.0.1:1",
            "APPLE_BUNDLE_ID": PaymentsCluster.bundleId,
            "APPLE_ENVIRONMENTS": "Production,Sandbox", "APPLE_APP_APPLE_ID": "1234",
            "APPLE_SANDBOX_USER_IDS": "\(Self.reviewer.uuidString),reviewer@example.com", "INTERNAL_AUTH": "off",
        ]
        let failure = try await offPool { () -> String? in
            do {
                let started = try ServiceProcess(executable: "PaymentsService", environment: settings)
                started.stop()
                return nil
            } catch {
                return "\(error)"
            }
        }
        let message = try XCTUnwrap(failure, "PaymentsService started with a malformed APPLE_SANDBOX_USER_IDS")
        XCTAssertTrue(
            message.contains(
                "PaymentsService: APPLE_SANDBOX_USER_IDS must be comma-separated UUIDs such as 123e4567-e89b-12d3-a456-426614174000 "
                    + "(entry \"r***@example.com\" is not one)"), message)
        XCTAssertFalse(message.contains("reviewer@"), "the email is masked")
    }
}
