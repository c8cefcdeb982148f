import Foundation
import XCTest

/// The audit trail across both services: each saga outcome PaymentsService
/// records writes exactly one "saga outcome" line, and each money movement
/// PointsService makes for it exactly one "money movement" line, with the
/// transaction id, user id, credits and result; a resubmission that changes
/// nothing writes no saga outcome.
final class PaymentsAuditTests: XCTestCase {
    static let shared = SharedCluster()

    override class func tearDown() {
        shared.shutdownBlocking()
        super.tearDown()
    }

    private static func auditLines(_ log: String, containing needle: String) -> [[String: String]] {
        log.split(separator: "\n").compactMap { line -> [String: String]? in
            guard line.contains(needle),
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]
            else {
                return nil
            }
            return object["audit"] == "true" ? object : nil
        }
    }

    func testAPurchaseAndItsRefundWriteOneAuditLinePerOutcomeAndMovement() async throws {
        let cluster = try await Self.shared.cluster()
        let user = UUID()
        let userText = user.uuidString.lowercased()
        let transactionId = PaymentsCluster.randomTransactionId()
        let granted = try await cluster.verify(
            try cluster.verifyRequest(user: user, productCode: "popular_pack", transactionId: transactionId))
        XCTAssertEqual(granted.outcome, .granted)
        let again = try await cluster.verify(
            try cluster.verifyRequest(user: user, productCode: "popular_pack", transactionId: transactionId))
        XCTAssertEqual(again.outcome, .alreadyGranted)
        _ = try await cluster.notify(try cluster.signedRefund(transactionId, productCode: "popular_pack"))
        let refunded = try await cluster.waitSettled(transactionId, status: "refunded")
        XCTAssertTrue(refunded)

        var saga: [[String: String]] = []
        for _ in 0..<100 {
            saga = Self.auditLines(cluster.paymentsLogs, containing: transactionId)
            if saga.count >= 2 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        XCTAssertEqual(saga.map { $0["msg"] ?? "" }, ["saga outcome", "saga outcome"])
        XCTAssertEqual(saga.map { $0["step"] ?? "" }, ["grant", "clawback"])
        XCTAssertEqual(saga.map { $0["outcome"] ?? "" }, ["granted", "clawed_back"])
        XCTAssertEqual(saga.map { $0["credits"] ?? "" }, ["210", "-210"])
        XCTAssertEqual(saga.map { $0["transaction_id"] ?? "" }, [transactionId, transactionId])
        XCTAssertEqual(saga.map { $0["user_id"] ?? "" }, [userText, userText])
        XCTAssertEqual(saga.map { $0["status"] ?? "" }, ["granted", "refunded"])

        let ledger = Self.auditLines(cluster.pointsLogs, containing: transactionId)
        XCTAssertEqual(ledger.map { $0["msg"] ?? "" }, ["money movement", "money movement"])
        XCTAssertEqual(ledger.map { $0["movement"] ?? "" }, ["grant", "clawback"])
        XCTAssertEqual(ledger.map { $0["result"] ?? "" }, ["applied", "applied"])
        XCTAssertEqual(ledger.map { $0["credits"] ?? "" }, ["210", "-210"])
        XCTAssertEqual(ledger.map { $0["balance_after"] ?? "" }, ["210", "0"])
        XCTAssertEqual(ledger.map { $0["user_id"] ?? "" }, [userText, userText])
        for line in saga + ledger {
            XCTAssertFalse(line.values.contains { $0.contains("@") || $0.hasPrefix("eyJ") }, "no email or JWS: \(line)")
        }
        try await cluster.assertPointsInvariants(users: [user])
    }
}
