import Contracts
import Foundation
import XCTest

/// A PaymentsService configured for Production only (with the app's
/// APPLE_APP_APPLE_ID): Production purchases are credited, Sandbox ones and
/// notifications for another app are refused and write nothing.
final class PaymentsProductionTests: XCTestCase {
    static let shared = SharedCluster {
        try await PaymentsCluster.start(environments: "Production", appAppleId: "1234")
    }

    override class func tearDown() {
        shared.shutdownBlocking()
        super.tearDown()
    }

    func testProductionPurchaseIsCreditedAndSandboxIsRefused() async throws {
        let cluster = try await Self.shared.cluster()
        let user = UUID()
        let transactionId = PaymentsCluster.randomTransactionId()
        let production = try cluster.signedTransaction(
            transactionId, productCode: "popular_pack", environment: "Production")
        let granted = try await cluster.verify(
            try cluster.verifyRequest(
                user: user, productCode: "popular_pack", transactionId: transactionId, signed: production))
        XCTAssertEqual(granted.outcome, .granted)
        let transaction = try await cluster.transaction(user, transactionId)
        XCTAssertEqual(transaction.environment, "Production")
        try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "popular_pack")

        let sandboxUser = UUID()
        let sandboxId = PaymentsCluster.randomTransactionId()
        let error = await expectRPCError(.invalidArgument, reason: "TRANSACTION_INVALID") {
            _ = try await cluster.verify(
                try cluster.verifyRequest(user: sandboxUser, productCode: "popular_pack", transactionId: sandboxId))
        }
        XCTAssertEqual(error?.metadata[stringValues: "jws-failure"].first, "wrong_environment")
        try await cluster.assertNothingWritten(sandboxId, user: sandboxUser)
        try await cluster.assertPointsInvariants(users: [user, sandboxUser])
    }

    func testNotificationsMustNameThisApp() async throws {
        let cluster = try await Self.shared.cluster()
        let ours = try await cluster.notify(
            try cluster.signedNotification("TEST", environment: "Production", appAppleId: 1234))
        XCTAssertEqual(ours.outcome, "acknowledged")
        let uuid = UUID()
        let error = await expectRPCError(.invalidArgument, reason: "TRANSACTION_INVALID") {
            _ = try await cluster.notify(
                try cluster.signedNotification("TEST", uuid: uuid, environment: "Production", appAppleId: 999))
        }
        XCTAssertEqual(error?.metadata[stringValues: "jws-failure"].first, "wrong_app_apple_id")
        let recorded = try await cluster.paymentsDatabase.withConnection {
            try await $0.query(
                "select count(*) as n from apple_notifications where notification_uuid = $1::uuid", [.uuid(uuid)]
            ).first!.int64("n")
        }
        XCTAssertEqual(recorded, 0)
    }
}
