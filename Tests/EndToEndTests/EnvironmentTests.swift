import Foundation
import XCTest

/// The system accepts Production (as scripts/run.sh's does): a Sandbox
/// (TestFlight) purchase is credited only to App Review's listed account;
/// anyone else's is a 403 the app must not retry, and nothing is written.
final class EnvironmentTests: XCTestCase {
    func testSandboxPurchaseIsCreditedOnlyToTheListedReviewer() async throws {
        let system = try await EndToEndSystem.get()
        let reviewer = system.user(id: EndToEndSystem.reviewerId)
        let reviewed = EndToEndSystem.randomTransactionId()
        let sandbox = try system.signedTransaction(
            transactionId: reviewed, productId: EndToEndSystem.productId("popular_pack"), appAccountToken: nil,
            environment: "Sandbox")
        let granted = try await system.verify(
            reviewer, productCode: "popular_pack", transactionId: reviewed, jws: sandbox)
        XCTAssertEqual(granted.status, 200, granted.text)
        XCTAssertEqual(granted.json["status"] as? String, "granted")
        let row = try await system.paymentRow(reviewed)
        XCTAssertEqual(row?.status, "granted")
        try await system.assertBalanceMatchesLedger(reviewer.id)

        let tester = system.user()
        let refusedId = EndToEndSystem.randomTransactionId()
        let testFlight = try system.signedTransaction(
            transactionId: refusedId, productId: EndToEndSystem.productId("popular_pack"), appAccountToken: nil,
            environment: "Sandbox")
        let refused = try await system.verify(
            tester, productCode: "popular_pack", transactionId: refusedId, jws: testFlight)
        XCTAssertEqual(refused.status, 403, refused.text)
        XCTAssertEqual(refused.problemCode, "PAYMENT_ENVIRONMENT_NOT_ALLOWED")
        XCTAssertEqual(refused.json["retryable"] as? Bool, false)
        XCTAssertEqual(
            refused.json["title"] as? String, "Sandbox/TestFlight purchases are not credited by this deployment")
        let refusedRow = try await system.paymentStatus(refusedId)
        XCTAssertNil(refusedRow, "no payments row")
        let pointsRows = try await system.pointsRowCount(tester.id)
        XCTAssertEqual(pointsRows, 0, "no points rows")

        // The same tester's Xcode (local-testing) purchase is credited.
        let localId = EndToEndSystem.randomTransactionId()
        let local = try await system.verify(tester, productCode: "popular_pack", transactionId: localId)
        XCTAssertEqual(local.status, 200, local.text)
        XCTAssertEqual(local.json["status"] as? String, "granted")
    }
}
