import Contracts
import Foundation
import PostgresClient
import XCTest

/// `PaymentsService redrive`, run as a process the way an operator would:
/// the way out of a failed or stuck purchase once its cause is fixed.
final class PaymentsRedriveTests: XCTestCase {
    static let shared = SharedCluster()

    override class func tearDown() {
        shared.shutdownBlocking()
        super.tearDown()
    }

    func testRedriveOfARefusedStarterPackCreditsItOnceTheClaimIsCorrected() async throws {
        let cluster = try await Self.shared.cluster()
        let user = UUID()
        let hash = PaymentsCluster.randomEmailHash()
        let first = PaymentsCluster.randomTransactionId(), second = PaymentsCluster.randomTransactionId()
        _ = try await cluster.verify(
            try cluster.verifyRequest(user: user, emailHash: hash, productCode: "new_user_pack", transactionId: first))
        await expectRPCError(.failedPrecondition, reason: "STARTER_PACK_INELIGIBLE") {
            _ = try await cluster.verify(
                try cluster.verifyRequest(
                    user: user, emailHash: hash, productCode: "new_user_pack", transactionId: second))
        }
        let failed = try await cluster.status(second)
        XCTAssertEqual(failed, "failed")

        // Re-driven while the cause stands: refused again, nothing credited, nothing left owed.
        let refusedAgain = try await cluster.redrive(second)
        XCTAssertEqual(refusedAgain.status, 0, refusedAgain.output)
        XCTAssertTrue(refusedAgain.output.contains("\"status\":\"failed\""), refusedAgain.output)
        let stillOne = try await cluster.balance(user)
        XCTAssertEqual(stillOne.balance, 60)

        // Support decides the second starter pack stands: the claim is reset, then re-driven.
        try await cluster.pointsDatabase.withConnection {
            _ = try await $0.query(
                "update register_bonus_claims set has_purchased_starter_pack = false where email_hash = $1",
                [.text(hash)])
        }
        let redriven = try await cluster.redrive(second)
        XCTAssertEqual(redriven.status, 0, redriven.output)
        XCTAssertTrue(redriven.output.contains("\"before\":{\"status\":\"failed\""), redriven.output)
        XCTAssertTrue(redriven.output.contains("\"after\":{\"status\":\"granted\""), redriven.output)
        let granted = try await cluster.status(second)
        XCTAssertEqual(granted, "granted")
        let credited = try await cluster.transaction(user, second)
        XCTAssertEqual(
            credited.ledgerEventId, "payment.apple_iap:\(second)", "named once the redriven grant credited it")
        let account = try await cluster.balance(user)
        XCTAssertEqual(account.balance, 120)
        // The app's resubmission is now answered already_granted.
        let again = try await cluster.verify(
            try cluster.verifyRequest(user: user, emailHash: hash, productCode: "new_user_pack", transactionId: second))
        XCTAssertEqual(again.outcome, .alreadyGranted)

        // Idempotent: a second redrive changes nothing.
        let twice = try await cluster.redrive(second)
        XCTAssertEqual(twice.status, 0, twice.output)
        let unchanged = try await cluster.balance(user)
        XCTAssertEqual(unchanged.balance, 120)
        let purchases = try await cluster.purchaseRows(second)
        XCTAssertEqual(purchases, 1)
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testRedriveOfAnUnknownTransactionSaysSoAndChangesNothing() async throws {
        let cluster = try await Self.shared.cluster()
        let unknown = try await cluster.redrive(PaymentsCluster.randomTransactionId())
        XCTAssertEqual(unknown.status, 1)
        XCTAssertTrue(unknown.output.contains("no transaction"), unknown.output)
        let usage = try await cluster.redrive("12ab")
        XCTAssertEqual(usage.status, 2, usage.output)
    }
}
