import Foundation
import XCTest

/// Buy, spend part, refund: the clawback and the overdue amount follow the
/// PRD (7.4), and the user's history routes show each step.
final class HistoryTests: XCTestCase {
    func testBuySpendPartRefundAndTheHistoryShowsEachStep() async throws {
        let system = try await EndToEndSystem.get()
        let user = system.user()
        let transactionId = EndToEndSystem.randomTransactionId()
        let bought = try await system.verify(user, productCode: "starter_pack", transactionId: transactionId)
        XCTAssertEqual(bought.json["status"] as? String, "granted", bought.text)
        try await system.spend(user.id, amount: 70)
        let refund = try await system.notify(
            type: "REFUND", transactionId: transactionId,
            productId: EndToEndSystem.productId("starter_pack"), appAccountToken: nil)
        XCTAssertEqual(refund.status, 200, refund.text)
        let settled = try await system.eventually {
            try await system.paymentStatus(transactionId) == "refunded_insufficient"
        }
        XCTAssertTrue(settled, "100 credits taken back from a balance of 30: refunded_insufficient")
        let balance = try await system.send("GET", "/api/v1/points/balance", token: user.token)
        XCTAssertEqual(balance.json["balance"] as? Int, 0)

        // The ledger, newest first: the refund (30 deducted, 70 overdue), the spend, the purchase.
        let ledger = try await system.send("GET", "/api/v1/points/ledger", token: user.token)
        XCTAssertEqual(ledger.status, 200, ledger.text)
        let entries = try XCTUnwrap(ledger.json["entries"] as? [[String: Any]])
        XCTAssertEqual(entries.map { $0["changeType"] as? String }, ["refund", "consume", "purchase"])
        XCTAssertEqual(entries.map { $0["amount"] as? Int }, [30, 70, 100])
        XCTAssertEqual(entries.map { $0["direction"] as? Int }, [-1, -1, 1])
        XCTAssertEqual(entries.map { $0["balanceAfter"] as? Int }, [0, 30, 100])
        XCTAssertEqual(entries[1]["bizType"] as? String, "chat")
        XCTAssertEqual(entries[2]["transactionId"] as? String, transactionId)
        XCTAssertEqual(entries[2]["productCode"] as? String, "starter_pack")
        XCTAssertNil(ledger.json["nextPageToken"])

        // Paged one entry at a time, the same three in the same order.
        var paged: [String] = []
        var path = "/api/v1/points/ledger?pageSize=1"
        for _ in 0..<5 {
            let page = try await system.send("GET", path, token: user.token)
            XCTAssertEqual(page.status, 200, page.text)
            paged += (page.json["entries"] as? [[String: Any]] ?? []).compactMap { $0["changeType"] as? String }
            guard let next = page.json["nextPageToken"] as? String else { break }
            path = "/api/v1/points/ledger?pageSize=1&pageToken=\(next)"
        }
        XCTAssertEqual(paged, ["refund", "consume", "purchase"])

        // The purchase history shows the purchase as refunded_insufficient.
        let purchases = try await system.send("GET", "/api/v1/payments/apple/transactions", token: user.token)
        XCTAssertEqual(purchases.status, 200, purchases.text)
        let listed = try XCTUnwrap(purchases.json["transactions"] as? [[String: Any]])
        XCTAssertEqual(listed.map { $0["transactionId"] as? String }, [transactionId])
        XCTAssertEqual(listed.first?["status"] as? String, "refunded_insufficient")

        // Nobody else sees any of it.
        let stranger = system.user()
        let theirs = try await system.send("GET", "/api/v1/points/ledger", token: stranger.token)
        XCTAssertEqual((theirs.json["entries"] as? [Any])?.count, 0)
        let theirPurchases = try await system.send("GET", "/api/v1/payments/apple/transactions", token: stranger.token)
        XCTAssertEqual((theirPurchases.json["transactions"] as? [Any])?.count, 0)
        let unknown = try await system.send("GET", "/api/v1/points/ledger?order=asc", token: user.token)
        XCTAssertEqual(unknown.status, 400, unknown.text)
        try await system.assertBalanceMatchesLedger(user.id)
    }
}
