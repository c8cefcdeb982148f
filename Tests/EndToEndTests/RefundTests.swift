import Foundation
import XCTest

/// Refund notifications (App Store Server Notifications V2) take credits
/// back exactly once: PRD 7.4 and 12.1.
final class RefundTests: XCTestCase {
    private func grant(_ system: EndToEndSystem, _ user: TestUser, _ productCode: String) async throws -> String {
        let transactionId = EndToEndSystem.randomTransactionId()
        let answer = try await system.verify(user, productCode: productCode, transactionId: transactionId)
        XCTAssertEqual(answer.json["status"] as? String, "granted", answer.text)
        return transactionId
    }

    func testRefundWithEnoughBalanceTakesTheCreditsBack() async throws {
        let system = try await EndToEndSystem.get()
        let user = system.user()
        let refunded = try await grant(system, user, "starter_pack")
        _ = try await grant(system, user, "popular_pack")
        let answer = try await system.notify(
            type: "REFUND", transactionId: refunded, productId: EndToEndSystem.productId("starter_pack"),
            appAccountToken: nil)
        XCTAssertEqual(answer.status, 200, answer.text)
        let settled = try await system.eventually { try await system.paymentStatus(refunded) == "refunded" }
        let statusNow = try await system.paymentStatus(refunded)
        XCTAssertTrue(settled, "status is \(statusNow ?? "nil")")
        let ledger = try await system.ledger(user.id)
        XCTAssertEqual(ledger.filter { $0.changeType == "refund" }.map(\.amount), [100])
        XCTAssertEqual(ledger.filter { $0.changeType == "refund" }.map(\.direction), [-1])
        let observed1 = try await system.account(user.id)?.balance
        XCTAssertEqual(observed1, 210)
        let observed2 = try await system.account(user.id)?.lifetimeEarned
        XCTAssertEqual(observed2, 210)
        try await system.assertBalanceMatchesLedger(user.id)
        let status = try await system.send("GET", "/api/v1/payments/apple/transactions/\(refunded)", token: user.token)
        XCTAssertEqual(status.json["status"] as? String, "refunded")
        XCTAssertNotNil(status.json["revocationDate"] as? String)
        // A refunded purchase cannot be credited again.
        let replay = try await system.verify(user, productCode: "starter_pack", transactionId: refunded)
        XCTAssertEqual(replay.status, 409, replay.text)
        XCTAssertEqual(replay.problemCode, "PAYMENT_TRANSACTION_REVOKED")
    }

    func testRefundWithTooLittleBalanceTakesWhatIsLeft() async throws {
        let system = try await EndToEndSystem.get()
        let user = system.user()
        let refunded = try await grant(system, user, "starter_pack")
        try await system.spend(user.id, amount: 70)
        let answer = try await system.notify(
            type: "REFUND", transactionId: refunded, productId: EndToEndSystem.productId("starter_pack"),
            appAccountToken: nil)
        XCTAssertEqual(answer.status, 200, answer.text)
        let settled = try await system.eventually {
            try await system.paymentStatus(refunded) == "refunded_insufficient"
        }
        let statusNow = try await system.paymentStatus(refunded)
        XCTAssertTrue(settled, "status is \(statusNow ?? "nil")")
        let observed3 = try await system.paymentRow(refunded)?.failureCode
        XCTAssertEqual(observed3, "INSUFFICIENT_BALANCE")
        let refunds = try await system.ledger(user.id).filter { $0.changeType == "refund" }
        XCTAssertEqual(refunds.map(\.amount), [30])
        // PRD 7.4: the operators' alert path fired for this transaction.
        let alerted = try await system.eventually {
            system.payments.logs.split(separator: "\n").contains {
                $0.contains("\"alert\":\"refunded_insufficient\"") && $0.contains(refunded)
                    && $0.contains("\"level\":\"critical\"")
            }
        }
        XCTAssertTrue(alerted, "no refunded_insufficient alert logged")
        let observed4 = try await system.account(user.id)?.balance
        XCTAssertEqual(observed4, 0)
        try await system.assertBalanceMatchesLedger(user.id)
    }

    func testDuplicateRefundNotificationsTakeBackOnce() async throws {
        let system = try await EndToEndSystem.get()
        let user = system.user()
        let refunded = try await grant(system, user, "premium_pack")
        _ = try await grant(system, user, "premium_pack")
        let productId = EndToEndSystem.productId("premium_pack")
        let uuid = UUID()
        for _ in 0..<3 {
            let answer = try await system.notify(
                type: "REFUND", transactionId: refunded, productId: productId, appAccountToken: nil,
                notificationUUID: uuid)
            XCTAssertEqual(answer.status, 200, answer.text)
        }
        // Apple may also send a second, distinct notification for the same refund.
        let other = try await system.notify(
            type: "REFUND", transactionId: refunded, productId: productId, appAccountToken: nil)
        XCTAssertEqual(other.status, 200, other.text)
        let settled = try await system.eventually { try await system.paymentStatus(refunded) == "refunded" }
        XCTAssertTrue(settled)
        let observed5 = try await system.notificationCount(uuid)
        XCTAssertEqual(observed5, 1)
        let observed6 = try await system.ledger(user.id).filter { $0.changeType == "refund" }.count
        XCTAssertEqual(observed6, 1)
        let observed7 = try await system.account(user.id)?.balance
        XCTAssertEqual(observed7, 415)
        try await system.assertBalanceMatchesLedger(user.id)
    }

    func testRefundOfATransactionNeverCreditedChangesNoBalance() async throws {
        let system = try await EndToEndSystem.get()
        let transactionId = EndToEndSystem.randomTransactionId()
        let answer = try await system.notify(
            type: "REFUND", transactionId: transactionId, productId: EndToEndSystem.productId("starter_pack"),
            appAccountToken: nil)
        XCTAssertEqual(answer.status, 200, answer.text)
        // Recorded as revoked so a later submission is refused, never credited.
        let observed8 = try await system.paymentStatus(transactionId)
        XCTAssertEqual(observed8, "revoked")
        let user = system.user()
        let late = try await system.verify(user, productCode: "starter_pack", transactionId: transactionId)
        XCTAssertEqual(late.status, 409, late.text)
        let observed9 = try await system.pointsRowCount(user.id)
        XCTAssertEqual(observed9, 0)
    }
}
