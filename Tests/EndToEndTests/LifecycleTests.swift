import Foundation
import TestSupport
import XCTest

/// The ledger agrees with Apple across a purchase's whole lifecycle: each
/// case that once ended with the wrong credits, through the public API
/// against the real services, with both databases checked.
final class LifecycleTests: XCTestCase {
    /// A logical clock for Apple's signed dates: each word is signed later
    /// than the one before (milliseconds, well in the past of `now`).
    private final class AppleClock: @unchecked Sendable {
        private var next = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        func tick() -> Int64 {
            next += 1_000
            return next
        }
    }

    private func id() -> String { EndToEndSystem.randomTransactionId() }

    // MARK: 1. Refunded before the app submitted it, then reversed

    /// The transaction carries the user's appAccountToken, so Apple's words
    /// claim it for the user: the REFUND records it revoked, the
    /// REFUND_REVERSED credits it without the app, and the app's later verify
    /// (with the JWS it has had since the purchase) answers already_granted.
    func testRefundBeforeVerifyThenReversedCreditsOnceAndTheAppsLaterVerifyIsAlreadyGranted() async throws {
        try await LifecycleSystem.with { system in
            let clock = AppleClock(), user = system.user(), transactionId = id()
            let token = try await system.accountToken(user)
            let purchased = try system.signedTransaction(
                transactionId, productCode: "popular_pack", signedAt: clock.tick(), appAccountToken: token)
            let refundAt = clock.tick()
            let refund = try system.signedNotification(
                "REFUND", signedAt: refundAt,
                transaction: try system.signedTransaction(
                    transactionId, productCode: "popular_pack", signedAt: refundAt, appAccountToken: token,
                    revocation: .init()))
            let reversed = try system.signedNotification(
                "REFUND_REVERSED", signedAt: clock.tick(), transaction: purchased)
            let refundAnswer = try await system.deliver(refund)
            XCTAssertEqual(refundAnswer.status, 200, refundAnswer.text)
            let afterRefund = try await system.row(transactionId)
            XCTAssertEqual(afterRefund?.status, "revoked")
            let reversedAnswer = try await system.deliver(reversed)
            XCTAssertEqual(reversedAnswer.status, 200, reversedAnswer.text)
            // Credited by the REFUND_REVERSED (run inline, or by the worker).
            var credited = false
            for _ in 0..<200 where !credited {
                credited = try await system.row(transactionId)?.status == "granted"
                if !credited { try await Task.sleep(for: .milliseconds(50)) }
            }
            XCTAssertTrue(credited)
            // The app submits the JWS it has had since the purchase (older than both words).
            let answer = try await system.verify(
                user, productCode: "popular_pack", transactionId: transactionId, jws: purchased)
            XCTAssertEqual(answer.status, 200, answer.text)
            XCTAssertEqual(answer.json["status"] as? String, "already_granted")
            XCTAssertEqual(answer.json["creditsAdded"] as? Int, 0)
            let balance = try await system.balance(user.id)
            XCTAssertEqual(balance, 210)
            let again = try await system.verify(
                user, productCode: "popular_pack", transactionId: transactionId, jws: purchased)
            XCTAssertEqual(again.json["status"] as? String, "already_granted", again.text)
            try await system.assertLedgerInvariants(user.id)
        }
    }

    // MARK: 2. REFUND, REFUND_REVERSED, REFUND again (another reason)

    func testRefundReversedRefundTakesBackTwiceAndRestoresOnce() async throws {
        try await LifecycleSystem.with { system in
            let clock = AppleClock(), user = system.user(), transactionId = id()
            let purchased = try system.signedTransaction(
                transactionId, productCode: "starter_pack", signedAt: clock.tick())
            let granted = try await system.verify(
                user, productCode: "starter_pack", transactionId: transactionId, jws: purchased)
            XCTAssertEqual(granted.json["status"] as? String, "granted", granted.text)
            for (type, reason) in [("REFUND", 0), ("REFUND_REVERSED", 0), ("REFUND", 1)] {
                let at = clock.tick()
                let transaction =
                    type == "REFUND"
                    ? try system.signedTransaction(
                        transactionId, productCode: "starter_pack", signedAt: at, revocation: .init(reason: reason))
                    : purchased
                let answer = try await system.deliver(
                    try system.signedNotification(type, signedAt: at, transaction: transaction))
                XCTAssertEqual(answer.status, 200, answer.text)
                let settled = try await system.settle()
                XCTAssertTrue(settled, "\(type) settles")
            }
            let refunds = try await system.ledgerAmounts(user: user.id, changeType: "refund")
            XCTAssertEqual(refunds, [100, 100], "taken back twice")
            let reversals = try await system.ledgerAmounts(user: user.id, changeType: "refund_reversal")
            XCTAssertEqual(reversals, [100], "restored once")
            let second = try await system.ledgerCount(event: "refund.apple_iap:\(transactionId):2")
            XCTAssertEqual(second, 1, "the second refund is its own event")
            let balance = try await system.balance(user.id)
            XCTAssertEqual(balance, 0)
            let row = try await system.row(transactionId)
            XCTAssertEqual(row?.status, "refunded")
            try await system.assertLedgerInvariants(user.id)
        }
    }

    // MARK: 3. A REFUND delivered late, after the REFUND_REVERSED that followed it

    func testALateRefundAfterItsReversalChangesNothing() async throws {
        try await LifecycleSystem.with { system in
            let clock = AppleClock(), user = system.user(), transactionId = id()
            let purchased = try system.signedTransaction(
                transactionId, productCode: "premium_pack", signedAt: clock.tick())
            _ = try await system.verify(user, productCode: "premium_pack", transactionId: transactionId, jws: purchased)
            let refundAt = clock.tick()
            let refund = try system.signedNotification(
                "REFUND", signedAt: refundAt,
                transaction: try system.signedTransaction(
                    transactionId, productCode: "premium_pack", signedAt: refundAt, revocation: .init()))
            let reversed = try system.signedNotification(
                "REFUND_REVERSED", signedAt: clock.tick(), transaction: purchased)
            // Apple's first delivery of the REFUND failed; the reversal arrives first.
            let first = try await system.deliver(reversed)
            XCTAssertEqual(first.status, 200, first.text)
            let late = try await system.deliver(refund)
            XCTAssertEqual(late.status, 200, late.text)
            let settled = try await system.settle()
            XCTAssertTrue(settled)
            let balance = try await system.balance(user.id)
            XCTAssertEqual(balance, 415, "Apple's last word was: reversed")
            let refunds = try await system.ledgerAmounts(user: user.id, changeType: "refund")
            XCTAssertEqual(refunds, [])
            let row = try await system.row(transactionId)
            XCTAssertEqual(row?.status, "granted")
            try await system.assertLedgerInvariants(user.id)
        }
    }

    // MARK: 4. One starter pack submitted concurrently

    func testConcurrentSubmissionsOfOneStarterPackAreReplaysAndARefundTakesItBack() async throws {
        try await LifecycleSystem.with { system in
            for concurrency in [2, 20] {
                let clock = AppleClock(), user = system.user(), transactionId = id()
                let jws = try system.signedTransaction(
                    transactionId, productCode: "new_user_pack", signedAt: clock.tick())
                let answers = try await withThrowingTaskGroup(of: HTTPAnswer.self) { group in
                    for _ in 0..<concurrency {
                        group.addTask {
                            try await system.verify(
                                user, productCode: "new_user_pack", transactionId: transactionId, jws: jws)
                        }
                    }
                    return try await group.reduce(into: [HTTPAnswer]()) { $0.append($1) }
                }
                let statuses = answers.map { $0.json["status"] as? String ?? "\($0.status) \($0.problemCode ?? "")" }
                XCTAssertEqual(statuses.filter { $0 == "granted" }.count, 1, "\(concurrency)-way: \(statuses)")
                XCTAssertEqual(
                    statuses.filter { $0 == "already_granted" }.count, concurrency - 1,
                    "\(concurrency)-way: \(statuses)")
                let purchases = try await system.ledgerCount(event: "payment.apple_iap:\(transactionId)")
                XCTAssertEqual(purchases, 1)
                let row = try await system.row(transactionId)
                XCTAssertEqual(row?.status, "granted")
                // The row was never left `failed`: a refund takes the credits back.
                let refundAt = clock.tick()
                _ = try await system.deliver(
                    try system.signedNotification(
                        "REFUND", signedAt: refundAt,
                        transaction: try system.signedTransaction(
                            transactionId, productCode: "new_user_pack", signedAt: refundAt, revocation: .init())))
                let settled = try await system.settle()
                XCTAssertTrue(settled)
                let balance = try await system.balance(user.id)
                XCTAssertEqual(balance, 0)
                try await system.assertLedgerInvariants(user.id)
            }
        }
    }

    // MARK: 5. A clawback whose reply was lost, then REFUND_REVERSED

    func testAClawbackWhoseReplyWasLostThenReversedRestoresExactlyOnce() async throws {
        try await LifecycleSystem.with(pointsFaults: "points.clawback_after_commit") { system in
            let clock = AppleClock(), user = system.user(), transactionId = id()
            let purchased = try system.signedTransaction(
                transactionId, productCode: "popular_pack", signedAt: clock.tick())
            _ = try await system.verify(user, productCode: "popular_pack", transactionId: transactionId, jws: purchased)
            let refundAt = clock.tick()
            let refund = try await system.deliver(
                try system.signedNotification(
                    "REFUND", signedAt: refundAt,
                    transaction: try system.signedTransaction(
                        transactionId, productCode: "popular_pack", signedAt: refundAt, revocation: .init())))
            XCTAssertEqual(refund.status, 200, refund.text)
            // PointsService committed the clawback and died before replying.
            let exited = try await system.points.waitForExit()
            XCTAssertTrue(exited)
            let taken = try await system.ledgerCount(event: "refund.apple_iap:\(transactionId)")
            XCTAssertEqual(taken, 1, "the clawback committed")
            let owed = try await system.row(transactionId)
            XCTAssertEqual(owed?.pending, "clawback", "its outcome is unknown to PaymentsService")
            let reversed = try await system.deliver(
                try system.signedNotification("REFUND_REVERSED", signedAt: clock.tick(), transaction: purchased))
            XCTAssertEqual(reversed.status, 200, reversed.text)
            try await system.startPoints(faults: "")
            let settled = try await system.settle()
            XCTAssertTrue(settled)
            let balance = try await system.balance(user.id)
            XCTAssertEqual(balance, 210, "what was taken is given back, once")
            let reversals = try await system.ledgerCount(event: "refund_reversed.apple_iap:\(transactionId)")
            XCTAssertEqual(reversals, 1)
            let row = try await system.row(transactionId)
            XCTAssertEqual(row?.status, "granted")
            try await system.assertLedgerInvariants(user.id)
        }
    }

    // MARK: 6. Quantity

    func testQuantityThreeCreditsThreePacksAndARefundTakesThemAllBack() async throws {
        try await LifecycleSystem.with { system in
            let clock = AppleClock(), user = system.user(), transactionId = id()
            let jws = try system.signedTransaction(
                transactionId, productCode: "popular_pack", signedAt: clock.tick(), quantity: 3)
            let answer = try await system.verify(
                user, productCode: "popular_pack", transactionId: transactionId, jws: jws)
            XCTAssertEqual(answer.json["creditsAdded"] as? Int, 630, answer.text)
            let granted = try await system.balance(user.id)
            XCTAssertEqual(granted, 630)
            let refundAt = clock.tick()
            _ = try await system.deliver(
                try system.signedNotification(
                    "REFUND", signedAt: refundAt,
                    transaction: try system.signedTransaction(
                        transactionId, productCode: "popular_pack", signedAt: refundAt, quantity: 3, revocation: .init()
                    )))
            let settled = try await system.settle()
            XCTAssertTrue(settled)
            let refunds = try await system.ledgerAmounts(user: user.id, changeType: "refund")
            XCTAssertEqual(refunds, [630])
            // Above StoreKit's bound: refused clearly, nothing written.
            let tooMany = id()
            let refused = try await system.verify(
                user, productCode: "popular_pack", transactionId: tooMany,
                jws: try system.signedTransaction(
                    tooMany, productCode: "popular_pack", signedAt: clock.tick(), quantity: 11))
            XCTAssertEqual(refused.status, 422, refused.text)
            XCTAssertEqual(refused.problemCode, "PAYMENT_TRANSACTION_INVALID")
            let none = try await system.row(tooMany)
            XCTAssertNil(none)
            try await system.assertLedgerInvariants(user.id)
        }
    }

    // MARK: 7. Prorated refunds

    func testAProratedRefundTakesBackItsShareRoundedInTheUsersFavour() async throws {
        try await LifecycleSystem.with { system in
            let clock = AppleClock(), user = system.user(), transactionId = id()
            let purchased = try system.signedTransaction(
                transactionId, productCode: "premium_pack", signedAt: clock.tick())
            _ = try await system.verify(user, productCode: "premium_pack", transactionId: transactionId, jws: purchased)
            let refundAt = clock.tick()
            _ = try await system.deliver(
                try system.signedNotification(
                    "REFUND", signedAt: refundAt,
                    transaction: try system.signedTransaction(
                        transactionId, productCode: "premium_pack", signedAt: refundAt,
                        revocation: .init(type: "REFUND_PRORATED", percentage: 33_333, reason: 1))))
            var settled = try await system.settle()
            XCTAssertTrue(settled)
            // 415 x 33.333% = 138.33: 138 taken back, the fraction stays with the customer.
            var balance = try await system.balance(user.id)
            XCTAssertEqual(balance, 277)
            let status = try await system.send(
                "GET", "/api/v1/payments/apple/transactions/\(transactionId)", token: user.token)
            XCTAssertEqual(status.json["status"] as? String, "refunded", status.text)
            // The app, its transaction still unfinished, submits it again: the
            // rest is still credited, so it hears already_granted and finishes
            // (it had heard 409 REVOKED and kept the transaction for ever).
            let again = try await system.verify(
                user, productCode: "premium_pack", transactionId: transactionId, jws: purchased)
            XCTAssertEqual(again.status, 200, again.text)
            XCTAssertEqual(again.json["status"] as? String, "already_granted", again.text)
            // Apple later refunds the rest (REFUND_FULL): the first share is given back, all is taken.
            let fullAt = clock.tick()
            _ = try await system.deliver(
                try system.signedNotification(
                    "REFUND", signedAt: fullAt,
                    transaction: try system.signedTransaction(
                        transactionId, productCode: "premium_pack", signedAt: fullAt, revocation: .init())))
            settled = try await system.settle()
            XCTAssertTrue(settled)
            balance = try await system.balance(user.id)
            XCTAssertEqual(balance, 0)
            // FAMILY_REVOKE of another purchase takes everything.
            let family = id()
            _ = try await system.verify(
                user, productCode: "starter_pack", transactionId: family,
                jws: try system.signedTransaction(
                    family, productCode: "starter_pack", signedAt: clock.tick()))
            let revokeAt = clock.tick()
            _ = try await system.deliver(
                try system.signedNotification(
                    "REVOKE", signedAt: revokeAt,
                    transaction: try system.signedTransaction(
                        family, productCode: "starter_pack", signedAt: revokeAt,
                        revocation: .init(type: "FAMILY_REVOKE", percentage: 50_000))))
            settled = try await system.settle()
            XCTAssertTrue(settled)
            balance = try await system.balance(user.id)
            XCTAssertEqual(balance, 0)
            try await system.assertLedgerInvariants(user.id)
        }
    }

    // MARK: 8. A catalog that lags behind the app during a rollout

    func testAPurchaseOfAProductTheCatalogLacksIsRetryableAndCreditedOnceTheCatalogHasIt() async throws {
        let catalog = try Self.catalogWithout("popular_pack")
        defer { try? FileManager.default.removeItem(atPath: catalog) }
        try await LifecycleSystem.with(pointsCatalog: catalog) { system in
            let clock = AppleClock(), user = system.user(), transactionId = id()
            let jws = try system.signedTransaction(transactionId, productCode: "popular_pack", signedAt: clock.tick())
            let early = try await system.verify(
                user, productCode: "popular_pack", transactionId: transactionId, jws: jws)
            XCTAssertEqual(early.status, 500, early.text)
            XCTAssertEqual(early.problemCode, "PAYMENT_GRANT_FAILED")
            XCTAssertEqual(early.json["retryable"] as? Bool, true, "a paid purchase is never refused for good")
            let alerted = system.paymentsLogs.contains("\"alert\":\"catalog_missing_product\"")
            XCTAssertTrue(alerted, "operators are alerted")
            // The rollout completes: PointsService serves the full catalog; the app resubmits.
            try await system.killPoints()
            try await system.startPoints(catalog: "config/packages.json")
            var answer = try await system.verify(
                user, productCode: "popular_pack", transactionId: transactionId, jws: jws)
            for _ in 0..<50 where answer.status != 200 {
                // PaymentsService's cached catalog is refreshed on a miss; give its client a moment to reconnect.
                try await Task.sleep(for: .milliseconds(100))
                answer = try await system.verify(
                    user, productCode: "popular_pack", transactionId: transactionId, jws: jws)
            }
            XCTAssertEqual(answer.json["status"] as? String, "granted", answer.text)
            let balance = try await system.balance(user.id)
            XCTAssertEqual(balance, 210)
            try await system.assertLedgerInvariants(user.id)
        }
    }

    static func catalogWithout(_ productCode: String) throws -> String {
        let shipped = try Data(contentsOf: ServiceProcess.repositoryRoot.appendingPathComponent("config/packages.json"))
        guard var object = try JSONSerialization.jsonObject(with: shipped) as? [String: Any],
            let packages = object["packages"] as? [[String: Any]]
        else { throw HTTPExchangeError(description: "unexpected catalog shape") }
        object["packages"] = packages.filter {
            $0["productCode"] as? String != productCode && $0["product_code"] as? String != productCode
        }
        let path = NSTemporaryDirectory() + "catalog-\(UUID().uuidString).json"
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    // MARK: 9. The email's content never fails a paid purchase

    func testAnEmailWithBidiControlsCreditsTheStarterPackAndNFCFormsAreOneIdentity() async throws {
        try await LifecycleSystem.with { system in
            let clock = AppleClock()
            let tag = UUID().uuidString.prefix(6).lowercased()
            let hostile = system.user(email: "r\u{202E}\(tag)@exa\u{2066}mple\u{200B}.com")
            let first = id()
            let answer = try await system.verify(
                hostile, productCode: "new_user_pack", transactionId: first,
                jws: try system.signedTransaction(
                    first, productCode: "new_user_pack", signedAt: clock.tick()))
            XCTAssertEqual(answer.json["status"] as? String, "granted", answer.text)
            // "é" composed and decomposed: one identity, so one starter pack.
            let composed = system.user(email: "jos\u{00E9}.\(tag)@example.com")
            let decomposed = system.user(email: "jose\u{0301}.\(tag)@example.com")
            let second = id(), third = id()
            let granted = try await system.verify(
                composed, productCode: "new_user_pack", transactionId: second,
                jws: try system.signedTransaction(
                    second, productCode: "new_user_pack", signedAt: clock.tick()))
            XCTAssertEqual(granted.json["status"] as? String, "granted", granted.text)
            let refused = try await system.verify(
                decomposed, productCode: "new_user_pack", transactionId: third,
                jws: try system.signedTransaction(
                    third, productCode: "new_user_pack", signedAt: clock.tick()))
            XCTAssertEqual(refused.problemCode, "PAYMENT_STARTER_PACK_INELIGIBLE", refused.text)
            try await system.assertLedgerInvariants(hostile.id)
        }
    }
}
