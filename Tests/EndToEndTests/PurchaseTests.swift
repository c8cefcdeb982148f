import Foundation
import XCTest

/// PRD 12.1 purchase cases through the gateway: the HTTP answer, the
/// problem code, and what both databases hold afterwards.
final class PurchaseTests: XCTestCase {
    func testVerifiedPurchaseIsRecordedAndCreditedOnce() async throws {
        let system = try await EndToEndSystem.get()
        let user = system.user()
        let accountToken = try await system.accountToken(user)
        let transactionId = EndToEndSystem.randomTransactionId()
        let answer = try await system.verify(
            user, productCode: "starter_pack", transactionId: transactionId, appAccountToken: accountToken)
        XCTAssertEqual(answer.status, 200, answer.text)
        XCTAssertEqual(answer.json["status"] as? String, "granted")
        XCTAssertEqual(answer.json["creditsAdded"] as? Int, 100)
        XCTAssertEqual(answer.json["newBalance"] as? Int, 100)
        XCTAssertEqual(answer.json["ledgerEventId"] as? String, "payment.apple_iap:\(transactionId)")

        let row = try await system.paymentRow(transactionId)
        XCTAssertEqual(row?.status, "granted")
        XCTAssertEqual(row?.userId, user.id.uuidString.lowercased())
        let ledger = try await system.ledger(user.id)
        XCTAssertEqual(
            ledger,
            [
                LedgerRow(
                    eventId: "payment.apple_iap:\(transactionId)", changeType: "purchase", direction: 1, amount: 100)
            ])
        let account = try await system.account(user.id)
        XCTAssertEqual(account?.balance, 100)
        XCTAssertEqual(account?.lifetimeEarned, 100)
        try await system.assertBalanceMatchesLedger(user.id)

        let balance = try await system.send("GET", "/api/v1/points/balance", token: user.token)
        XCTAssertEqual(balance.status, 200)
        XCTAssertEqual(balance.json["balance"] as? Int, 100)
        let status = try await system.send(
            "GET", "/api/v1/payments/apple/transactions/\(transactionId)", token: user.token)
        XCTAssertEqual(status.status, 200)
        XCTAssertEqual(status.json["status"] as? String, "granted")
        XCTAssertEqual(status.json["credits"] as? Int, 100)
    }

    func testResubmittedTransactionIsAlreadyGrantedAndCreditedOnce() async throws {
        let system = try await EndToEndSystem.get()
        let user = system.user()
        let transactionId = EndToEndSystem.randomTransactionId()
        let jws = try system.signedTransaction(
            transactionId: transactionId, productId: EndToEndSystem.productId("popular_pack"), appAccountToken: nil)
        let first = try await system.verify(user, productCode: "popular_pack", transactionId: transactionId, jws: jws)
        XCTAssertEqual(first.json["status"] as? String, "granted", first.text)
        for _ in 0..<3 {
            let again = try await system.verify(
                user, productCode: "popular_pack", transactionId: transactionId, jws: jws)
            XCTAssertEqual(again.status, 200, again.text)
            XCTAssertEqual(again.json["status"] as? String, "already_granted")
            XCTAssertEqual(again.json["creditsAdded"] as? Int, 0)
            XCTAssertEqual(again.json["newBalance"] as? Int, 210)
        }
        let observed1 = try await system.ledger(user.id).count
        XCTAssertEqual(observed1, 1)
        let observed2 = try await system.account(user.id)?.balance
        XCTAssertEqual(observed2, 210)
        let observed3 = try await system.paymentStatus(transactionId)
        XCTAssertEqual(observed3, "granted")
    }

    /// PRD 12.2: concurrent duplicate submissions credit exactly once.
    func testConcurrentDuplicateSubmissionsCreditOnce() async throws {
        let system = try await EndToEndSystem.get()
        let user = system.user()
        let transactionId = EndToEndSystem.randomTransactionId()
        let jws = try system.signedTransaction(
            transactionId: transactionId, productId: EndToEndSystem.productId("starter_pack"), appAccountToken: nil)
        let answers = try await withThrowingTaskGroup(of: HTTPAnswer.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    try await system.verify(user, productCode: "starter_pack", transactionId: transactionId, jws: jws)
                }
            }
            return try await group.reduce(into: [HTTPAnswer]()) { $0.append($1) }
        }
        let granted = answers.filter { $0.status == 200 && $0.json["status"] as? String == "granted" }
        XCTAssertEqual(granted.count, 1, answers.map { "\($0.status) \($0.text)" }.joined(separator: "\n"))
        for answer in answers where answer.status == 200 {
            XCTAssertEqual(answer.json["newBalance"] as? Int, 100)
        }
        // A loser may also be told to retry (409/503 with retryable); never credited twice.
        let observed4 = try await system.ledger(user.id).count
        XCTAssertEqual(observed4, 1)
        let observed5 = try await system.account(user.id)?.balance
        XCTAssertEqual(observed5, 100)
        let observed6 = try await system.paymentStatus(transactionId)
        XCTAssertEqual(observed6, "granted")
    }

    func testUnknownProductCodeIsNotFoundAndWritesNothing() async throws {
        let system = try await EndToEndSystem.get()
        let user = system.user()
        let transactionId = EndToEndSystem.randomTransactionId()
        let answer = try await system.verify(
            user, productCode: "no_such_pack", transactionId: transactionId,
            appStoreProductId: EndToEndSystem.productId("starter_pack"))
        XCTAssertEqual(answer.status, 404, answer.text)
        XCTAssertEqual(answer.problemCode, "PAYMENT_PRODUCT_NOT_FOUND")
        let observed7 = try await system.paymentStatus(transactionId)
        XCTAssertNil(observed7)
        let observed8 = try await system.pointsRowCount(user.id)
        XCTAssertEqual(observed8, 0)
    }

    func testProductIdMismatchIsRefusedAndWritesNothing() async throws {
        let system = try await EndToEndSystem.get()
        let user = system.user()
        // The request pairs starter_pack with another package's App Store id.
        let paired = EndToEndSystem.randomTransactionId()
        let pairedAnswer = try await system.verify(
            user, productCode: "starter_pack", transactionId: paired,
            appStoreProductId: EndToEndSystem.productId("premium_pack"))
        XCTAssertEqual(pairedAnswer.status, 422, pairedAnswer.text)
        XCTAssertEqual(pairedAnswer.problemCode, "PAYMENT_PRODUCT_MISMATCH")
        // The request is consistent but Apple signed a purchase of another product.
        let signedOther = EndToEndSystem.randomTransactionId()
        let jws = try system.signedTransaction(
            transactionId: signedOther, productId: EndToEndSystem.productId("premium_pack"), appAccountToken: nil)
        let signedAnswer = try await system.verify(
            user, productCode: "starter_pack", transactionId: signedOther, jws: jws)
        XCTAssertEqual(signedAnswer.status, 422, signedAnswer.text)
        XCTAssertEqual(signedAnswer.problemCode, "PAYMENT_PRODUCT_MISMATCH")
        let observed9 = try await system.paymentStatus(paired)
        XCTAssertNil(observed9)
        let observed10 = try await system.paymentStatus(signedOther)
        XCTAssertNil(observed10)
        let observed11 = try await system.pointsRowCount(user.id)
        XCTAssertEqual(observed11, 0)
    }

    func testRevokedTransactionIsNotCredited() async throws {
        let system = try await EndToEndSystem.get()
        let user = system.user()
        let transactionId = EndToEndSystem.randomTransactionId()
        let jws = try system.signedTransaction(
            transactionId: transactionId, productId: EndToEndSystem.productId("starter_pack"), appAccountToken: nil,
            revocationDateMilliseconds: Int64(Date().timeIntervalSince1970 * 1000) - 1_000)
        let answer = try await system.verify(user, productCode: "starter_pack", transactionId: transactionId, jws: jws)
        XCTAssertEqual(answer.status, 409, answer.text)
        XCTAssertEqual(answer.problemCode, "PAYMENT_TRANSACTION_REVOKED")
        let observed12 = try await system.paymentStatus(transactionId)
        XCTAssertEqual(observed12, "revoked")
        let observed13 = try await system.pointsRowCount(user.id)
        XCTAssertEqual(observed13, 0)
        let again = try await system.verify(user, productCode: "starter_pack", transactionId: transactionId, jws: jws)
        XCTAssertEqual(again.problemCode, "PAYMENT_TRANSACTION_REVOKED")
    }

    func testAnotherUsersTransactionIsRefused() async throws {
        let system = try await EndToEndSystem.get()
        let owner = system.user()
        let thief = system.user()
        let transactionId = EndToEndSystem.randomTransactionId()
        let jws = try system.signedTransaction(
            transactionId: transactionId, productId: EndToEndSystem.productId("starter_pack"), appAccountToken: nil)
        let granted = try await system.verify(
            owner, productCode: "starter_pack", transactionId: transactionId, jws: jws)
        XCTAssertEqual(granted.json["status"] as? String, "granted", granted.text)

        let stolen = try await system.verify(thief, productCode: "starter_pack", transactionId: transactionId, jws: jws)
        XCTAssertEqual(stolen.status, 409, stolen.text)
        XCTAssertEqual(stolen.problemCode, "PAYMENT_TRANSACTION_CONFLICT")
        // A purchase bound to the owner's appAccountToken cannot be moved either.
        let ownerToken = try await system.accountToken(owner)
        let boundId = EndToEndSystem.randomTransactionId()
        let bound = try await system.verify(
            thief, productCode: "starter_pack", transactionId: boundId, appAccountToken: ownerToken)
        XCTAssertEqual(bound.status, 409, bound.text)
        XCTAssertEqual(bound.problemCode, "PAYMENT_TRANSACTION_CONFLICT")

        let observed14 = try await system.paymentRow(transactionId)?.userId
        XCTAssertEqual(observed14, owner.id.uuidString.lowercased())
        let observed15 = try await system.paymentStatus(boundId)
        XCTAssertNil(observed15)
        let observed16 = try await system.pointsRowCount(thief.id)
        XCTAssertEqual(observed16, 0)
        let observed17 = try await system.account(owner.id)?.balance
        XCTAssertEqual(observed17, 100)
        // Nor can the other user read it.
        let peek = try await system.send(
            "GET", "/api/v1/payments/apple/transactions/\(transactionId)", token: thief.token)
        XCTAssertEqual(peek.status, 404, peek.text)
        XCTAssertEqual(peek.problemCode, "NOT_FOUND")
    }
}
