import Contracts
import Foundation
import PostgresClient
import XCTest

/// PRD 12.1 and 12.2 end to end: a real PaymentsService and a real
/// PointsService over gRPC on real databases, every test ending with the
/// rows of both databases checked.
final class PaymentsFlowTests: XCTestCase {
    static let shared = SharedCluster()

    override class func tearDown() {
        shared.shutdownBlocking()
        super.tearDown()
    }

    private func cluster() async throws -> PaymentsCluster { try await Self.shared.cluster() }

    func testVerifyGrantsCatalogCreditsExactlyOnceWithLedgerMetadata() async throws {
        let cluster = try await cluster()
        let user = UUID(), other = UUID()
        let hash = PaymentsCluster.randomEmailHash()
        var expectedBalance: Int64 = 0
        var transactions: [(id: String, product: String)] = []
        for product in ["starter_pack", "popular_pack", "premium_pack"] {
            let transactionId = PaymentsCluster.randomTransactionId()
            let response = try await cluster.verify(
                try cluster.verifyRequest(
                    user: user, emailHash: hash, productCode: product, transactionId: transactionId))
            expectedBalance += PaymentsCluster.credits[product]!
            XCTAssertEqual(response.outcome, .granted)
            XCTAssertEqual(response.productCode, product)
            XCTAssertEqual(response.transactionId, transactionId)
            XCTAssertEqual(response.creditsAdded, PaymentsCluster.credits[product])
            XCTAssertEqual(response.newBalance, expectedBalance)
            XCTAssertEqual(response.ledgerEventId, "payment.apple_iap:\(transactionId)")
            try await cluster.assertGrantedOnce(transactionId, user: user, productCode: product)
            transactions.append((transactionId, product))
        }
        let account = try await cluster.balance(user)
        XCTAssertEqual(account.balance, 725)
        XCTAssertEqual(account.earned, 725)

        // PRD 5.4 metadata on the purchase row.
        let (transactionId, product) = transactions[1]
        let row = try await cluster.row(transactionId)
        let ext = try await cluster.ledgerExt(event: "payment.apple_iap:\(transactionId)")
        XCTAssertEqual(ext["source"] as? String, "apple_iap")
        XCTAssertEqual(ext["platform"] as? String, "ios")
        XCTAssertEqual(ext["product_code"] as? String, product)
        XCTAssertEqual(ext["app_store_product_id"] as? String, PaymentsCluster.appStoreProductId(product))
        XCTAssertEqual(ext["transaction_id"] as? String, transactionId)
        XCTAssertEqual(ext["original_transaction_id"] as? String, transactionId)
        XCTAssertEqual(ext["environment"] as? String, "Sandbox")
        XCTAssertEqual(ext["apple_iap_transaction_id"] as? String, row?.id)

        // The same transaction again: already granted, nothing changes.
        let again = try await cluster.verify(
            try cluster.verifyRequest(user: user, emailHash: hash, productCode: product, transactionId: transactionId))
        XCTAssertEqual(again.outcome, .alreadyGranted)
        XCTAssertEqual(again.creditsAdded, 0)
        XCTAssertEqual(again.newBalance, 725)
        XCTAssertEqual(again.ledgerEventId, "payment.apple_iap:\(transactionId)")
        // By another user: a conflict, nothing written for them.
        await expectRPCError(.alreadyExists, reason: "TRANSACTION_CONFLICT") {
            _ = try await cluster.verify(
                try cluster.verifyRequest(user: other, productCode: product, transactionId: transactionId))
        }
        for (id, product) in transactions { try await cluster.assertGrantedOnce(id, user: user, productCode: product) }
        let otherRows = try await cluster.ledgerRows(user: other)
        XCTAssertEqual(otherRows, 0)

        // GetTransaction: own, and not another user's.
        let own = try await cluster.transaction(user, transactionId)
        XCTAssertEqual(own.status, .granted)
        XCTAssertEqual(own.credits, 210)
        XCTAssertEqual(own.userId, user.uuidString.lowercased())
        XCTAssertEqual(own.ledgerEventId, "payment.apple_iap:\(transactionId)")
        XCTAssertEqual(own.environment, "Sandbox")
        await expectRPCError(.notFound, reason: "TRANSACTION_NOT_FOUND") {
            _ = try await cluster.transaction(other, transactionId)
        }
        try await cluster.assertPointsInvariants(users: [user, other])
    }

    func testUnknownProductAndProductMismatchWriteNothing() async throws {
        let cluster = try await cluster()
        let user = UUID()
        let transactionId = PaymentsCluster.randomTransactionId()
        var unknown = try cluster.verifyRequest(user: user, productCode: "starter_pack", transactionId: transactionId)
        unknown.productCode = "gold_pack"
        await expectRPCError(.notFound, reason: "PRODUCT_NOT_FOUND") { _ = try await cluster.verify(unknown) }

        // The request's product ids disagree with the catalog.
        var crossed = try cluster.verifyRequest(user: user, productCode: "starter_pack", transactionId: transactionId)
        crossed.appStoreProductId = PaymentsCluster.appStoreProductId("popular_pack")
        await expectRPCError(.invalidArgument, reason: "PRODUCT_MISMATCH") { _ = try await cluster.verify(crossed) }

        // The request agrees with the catalog, the signed payload is for another product.
        let signedForPopular = try cluster.signedTransaction(transactionId, productCode: "popular_pack")
        await expectRPCError(.invalidArgument, reason: "PRODUCT_MISMATCH") {
            _ = try await cluster.verify(
                try cluster.verifyRequest(
                    user: user, productCode: "starter_pack", transactionId: transactionId, signed: signedForPopular))
        }
        // The request's transaction id is not the signed one.
        let otherSigned = try cluster.signedTransaction(
            PaymentsCluster.randomTransactionId(), productCode: "starter_pack")
        let error = await expectRPCError(.invalidArgument, reason: "TRANSACTION_INVALID") {
            _ = try await cluster.verify(
                try cluster.verifyRequest(
                    user: user, productCode: "starter_pack", transactionId: transactionId, signed: otherSigned))
        }
        XCTAssertEqual(error?.metadata[stringValues: "jws-failure"].first, "claims")
        try await cluster.assertNothingWritten(transactionId, user: user)
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testRevokedTransactionIsRecordedAndNeverCredited() async throws {
        let cluster = try await cluster()
        let user = UUID()
        let transactionId = PaymentsCluster.randomTransactionId()
        let revoked = try cluster.signedTransaction(transactionId, productCode: "popular_pack", revocationReason: 1)
        for _ in 0..<2 {
            await expectRPCError(.failedPrecondition, reason: "TRANSACTION_REVOKED") {
                _ = try await cluster.verify(
                    try cluster.verifyRequest(
                        user: user, productCode: "popular_pack", transactionId: transactionId, signed: revoked))
            }
        }
        // Resubmitting the original (unrevoked) JWS is refused too.
        await expectRPCError(.failedPrecondition, reason: "TRANSACTION_REVOKED") {
            _ = try await cluster.verify(
                try cluster.verifyRequest(user: user, productCode: "popular_pack", transactionId: transactionId))
        }
        let status = try await cluster.status(transactionId)
        XCTAssertEqual(status, "revoked")
        let rows = try await cluster.ledgerRows(user: user)
        XCTAssertEqual(rows, 0)
        let account = try await cluster.balance(user)
        XCTAssertEqual(account.balance, 0)
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testRevokedTransactionSubmittedAfterItsGrantTakesTheCreditsBack() async throws {
        // StoreKit hands the app the revoked transaction before (or without)
        // Apple's REFUND notification reaching the server.
        let cluster = try await cluster()
        let user = UUID()
        let transactionId = PaymentsCluster.randomTransactionId()
        _ = try await cluster.verify(
            try cluster.verifyRequest(user: user, productCode: "starter_pack", transactionId: transactionId))
        let revoked = try cluster.signedTransaction(transactionId, productCode: "starter_pack", revocationReason: 0)
        await expectRPCError(.failedPrecondition, reason: "TRANSACTION_REVOKED") {
            _ = try await cluster.verify(
                try cluster.verifyRequest(
                    user: user, productCode: "starter_pack", transactionId: transactionId, signed: revoked))
        }
        let refunded = try await cluster.waitSettled(transactionId, status: "refunded")
        XCTAssertTrue(refunded, "the signed revocation takes the credits back")
        let account = try await cluster.balance(user)
        XCTAssertEqual(account.balance, 0)
        let refunds = try await cluster.refundRows(transactionId)
        XCTAssertEqual(refunds, 1)
        // Apple's notification arriving afterwards changes nothing more.
        let late = try await cluster.notify(try cluster.signedRefund(transactionId, productCode: "starter_pack"))
        XCTAssertEqual(late.outcome, "already_taken_back")
        try await Task.sleep(for: .milliseconds(200))
        let refundsAfter = try await cluster.refundRows(transactionId)
        XCTAssertEqual(refundsAfter, 1)
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testStarterPackOncePerEmailIdentityEvenAfterReRegistration() async throws {
        let cluster = try await cluster()
        let first = UUID(), reRegistered = UUID()
        let hash = PaymentsCluster.randomEmailHash()
        let firstTransaction = PaymentsCluster.randomTransactionId()
        let granted = try await cluster.verify(
            try cluster.verifyRequest(
                user: first, emailHash: hash, productCode: "new_user_pack", transactionId: firstTransaction))
        XCTAssertEqual(granted.outcome, .granted)
        XCTAssertEqual(granted.creditsAdded, 60)
        try await cluster.assertGrantedOnce(firstTransaction, user: first, productCode: "new_user_pack")
        let purchased = try await cluster.pointsDatabase.withConnection {
            try await $0.query(
                "select has_purchased_starter_pack from register_bonus_claims where email_hash = $1", [.text(hash)]
            ).first?.bool("has_purchased_starter_pack")
        }
        XCTAssertEqual(purchased, true)

        for user in [first, reRegistered] {
            let transactionId = PaymentsCluster.randomTransactionId()
            for _ in 0..<2 {
                await expectRPCError(.failedPrecondition, reason: "STARTER_PACK_INELIGIBLE") {
                    _ = try await cluster.verify(
                        try cluster.verifyRequest(
                            user: user, emailHash: hash, productCode: "new_user_pack", transactionId: transactionId))
                }
            }
            let row = try await cluster.row(transactionId)
            XCTAssertEqual(row?.status, "failed")
            XCTAssertEqual(row?.failureCode, "STARTER_PACK_INELIGIBLE")
            XCTAssertNil(row?.pendingAction)
            XCTAssertNil(row?.ledgerEventId, "a refused grant has no ledger entry to name")
            let refused = try await cluster.transaction(user, transactionId)
            XCTAssertEqual(refused.status, .failed)
            XCTAssertEqual(refused.ledgerEventId, "", "present once credited")
            // A refused row stored before the fix names the event id; it is still not presented.
            try await cluster.paymentsDatabase.withConnection {
                _ = try await $0.query(
                    "update apple_iap_transactions set ledger_event_id = $2 where transaction_id = $1",
                    [.text(transactionId), .text("payment.apple_iap:\(transactionId)")])
            }
            let storedBefore = try await cluster.transaction(user, transactionId)
            XCTAssertEqual(storedBefore.ledgerEventId, "")
            let rows = try await cluster.purchaseRows(transactionId)
            XCTAssertEqual(rows, 0)
        }
        let account = try await cluster.balance(first)
        XCTAssertEqual(account.balance, 60)
        let reRegisteredRows = try await cluster.ledgerRows(user: reRegistered)
        XCTAssertEqual(reRegisteredRows, 0)
        try await cluster.assertPointsInvariants(users: [first, reRegistered])
    }

    func testRefundWithEnoughBalanceIsTakenBackOnceAndReversalRestoresOnce() async throws {
        let cluster = try await cluster()
        let user = UUID()
        let transactionId = PaymentsCluster.randomTransactionId()
        _ = try await cluster.verify(
            try cluster.verifyRequest(user: user, productCode: "popular_pack", transactionId: transactionId))
        let refundUUID = UUID()
        let refund = try cluster.signedRefund(transactionId, productCode: "popular_pack", uuid: refundUUID)
        let answer = try await cluster.notify(refund)
        XCTAssertEqual(answer.notificationType, "REFUND")
        XCTAssertEqual(answer.notificationUuid, refundUUID.uuidString.lowercased())
        XCTAssertFalse(answer.duplicate)
        XCTAssertEqual(answer.outcome, "clawback_scheduled")
        let refunded = try await cluster.waitSettled(transactionId, status: "refunded")
        XCTAssertTrue(refunded)
        var account = try await cluster.balance(user)
        XCTAssertEqual(account.balance, 0)
        let ext = try await cluster.ledgerExt(event: "refund.apple_iap:\(transactionId)")
        XCTAssertEqual(ext["original_event_id"] as? String, "payment.apple_iap:\(transactionId)")
        XCTAssertEqual((ext["overdue_amount"] as? NSNumber)?.int64Value, 0)

        // The same notification again, then a new one for the same transaction: nothing more.
        let redelivered = try await cluster.notify(refund)
        XCTAssertTrue(redelivered.duplicate)
        XCTAssertEqual(redelivered.outcome, "clawback_scheduled")
        let second = try await cluster.notify(try cluster.signedRefund(transactionId, productCode: "popular_pack"))
        XCTAssertFalse(second.duplicate)
        XCTAssertEqual(second.outcome, "already_taken_back")
        try await Task.sleep(for: .milliseconds(300))
        var refunds = try await cluster.refundRows(transactionId)
        XCTAssertEqual(refunds, 1)
        let status = try await cluster.status(transactionId)
        XCTAssertEqual(status, "refunded")
        await expectRPCError(.failedPrecondition, reason: "TRANSACTION_REVOKED") {
            _ = try await cluster.verify(
                try cluster.verifyRequest(user: user, productCode: "popular_pack", transactionId: transactionId))
        }

        // REFUND_REVERSED gives the credits back, once.
        let reversal = try cluster.signedNotification(
            "REFUND_REVERSED",
            signedTransactionInfo: try cluster.signedTransaction(transactionId, productCode: "popular_pack"))
        let reversed = try await cluster.notify(reversal)
        XCTAssertEqual(reversed.outcome, "restore_scheduled")
        let restored = try await cluster.waitSettled(transactionId, status: "granted")
        XCTAssertTrue(restored)
        _ = try await cluster.notify(reversal)
        _ = try await cluster.notify(
            try cluster.signedNotification(
                "REFUND_REVERSED",
                signedTransactionInfo: try cluster.signedTransaction(transactionId, productCode: "popular_pack")))
        try await Task.sleep(for: .milliseconds(300))
        account = try await cluster.balance(user)
        XCTAssertEqual(account.balance, 210)
        let reversals = try await cluster.ledgerCount(event: "refund_reversed.apple_iap:\(transactionId)")
        XCTAssertEqual(reversals, 1, "one reversal row")
        refunds = try await cluster.refundRows(transactionId)
        XCTAssertEqual(refunds, 1)
        let purchases = try await cluster.purchaseRows(transactionId)
        XCTAssertEqual(purchases, 1)
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testRefundLargerThanTheBalanceEndsInsufficientWithAnAlert() async throws {
        let cluster = try await cluster()
        let user = UUID()
        let transactionId = PaymentsCluster.randomTransactionId()
        _ = try await cluster.verify(
            try cluster.verifyRequest(user: user, productCode: "premium_pack", transactionId: transactionId))
        try await cluster.spend(user, amount: 400)
        _ = try await cluster.notify(try cluster.signedRefund(transactionId, productCode: "premium_pack"))
        let settled = try await cluster.waitSettled(transactionId, status: "refunded_insufficient")
        XCTAssertTrue(settled)
        let row = try await cluster.row(transactionId)
        XCTAssertEqual(row?.overdueAmount, 400)
        XCTAssertEqual(row?.failureCode, "INSUFFICIENT_BALANCE")
        let account = try await cluster.balance(user)
        XCTAssertEqual(account.balance, 0)
        let refund = try await cluster.pointsDatabase.withConnection {
            try await $0.query(
                "select amount, (metadata -> 'ext' ->> 'overdue_amount')::bigint as overdue from points_ledger where event_id = $1",
                [.text("refund.apple_iap:\(transactionId)")]
            ).first
        }
        XCTAssertEqual(try refund?.int64("amount"), 15)
        XCTAssertEqual(try refund?.int64("overdue"), 400)
        let refunds = try await cluster.refundRows(transactionId)
        XCTAssertEqual(refunds, 1)
        let alerted = try await cluster.eventually(timeout: .seconds(5)) {
            cluster.paymentsLogs.split(separator: "\n").contains { $0.contains("ALERT") && $0.contains(transactionId) }
        }
        XCTAssertTrue(alerted, "an ALERT log line names the transaction")
        // Logs never carry a JWS (its signature part would show) nor the masked email.
        let logs = cluster.paymentsLogs
        let signed = try cluster.signedTransaction(transactionId, productCode: "premium_pack")
        XCTAssertFalse(logs.contains(String(signed.split(separator: ".")[0])), "no JWS header in the logs")
        XCTAssertFalse(logs.contains("a***@example.com"), "no email in the logs")
        let transaction = try await cluster.transaction(user, transactionId)
        XCTAssertEqual(transaction.status, .refundedInsufficient)
        XCTAssertEqual(transaction.overdueAmount, 400)
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testRefundOfATransactionNeverSeenIsRecordedRevokedAndALaterVerifyIsRefused() async throws {
        let cluster = try await cluster()
        let user = UUID()
        let token = try await cluster.accountToken(user)
        let transactionId = PaymentsCluster.randomTransactionId()
        let answer = try await cluster.notify(
            try cluster.signedRefund(transactionId, productCode: "starter_pack", appAccountToken: token))
        XCTAssertEqual(answer.outcome, "revoked_before_verify")
        let row = try await cluster.row(transactionId)
        XCTAssertEqual(row?.status, "revoked")
        XCTAssertEqual(row?.userId, user.uuidString.lowercased(), "owner found through the appAccountToken")
        await expectRPCError(.failedPrecondition, reason: "TRANSACTION_REVOKED") {
            let signed = try cluster.signedTransaction(
                transactionId, productCode: "starter_pack", appAccountToken: token)
            _ = try await cluster.verify(
                try cluster.verifyRequest(
                    user: user, productCode: "starter_pack", transactionId: transactionId, signed: signed,
                    appAccountToken: token))
        }
        let rows = try await cluster.ledgerRows(user: user)
        XCTAssertEqual(rows, 0)
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testTestAndConsumptionRequestNotificationsAreRecorded() async throws {
        let cluster = try await cluster()
        let user = UUID()
        let testUUID = UUID()
        let test = try await cluster.notify(try cluster.signedNotification("TEST", uuid: testUUID))
        XCTAssertEqual(test.outcome, "acknowledged")
        XCTAssertEqual(test.notificationType, "TEST")
        XCTAssertFalse(test.duplicate)
        let again = try await cluster.notify(try cluster.signedNotification("TEST", uuid: testUUID))
        XCTAssertTrue(again.duplicate)

        let transactionId = PaymentsCluster.randomTransactionId()
        _ = try await cluster.verify(
            try cluster.verifyRequest(user: user, productCode: "starter_pack", transactionId: transactionId))
        let consumptionUUID = UUID()
        let consumption = try await cluster.notify(
            try cluster.signedNotification(
                "CONSUMPTION_REQUEST", uuid: consumptionUUID,
                signedTransactionInfo: try cluster.signedTransaction(transactionId, productCode: "starter_pack")))
        XCTAssertEqual(consumption.outcome, "consumption_requested")
        let recorded = try await cluster.paymentsDatabase.withConnection {
            try await $0.query(
                "select notification_type, transaction_id from apple_notifications where notification_uuid = $1::uuid",
                [.uuid(consumptionUUID)]
            ).first
        }
        XCTAssertEqual(try recorded?.string("notification_type"), "CONSUMPTION_REQUEST")
        XCTAssertEqual(try recorded?.optionalString("transaction_id"), transactionId)
        let testRows = try await cluster.paymentsDatabase.withConnection {
            try await $0.query(
                "select count(*) as n from apple_notifications where notification_uuid = $1::uuid", [.uuid(testUUID)]
            ).first!.int64("n")
        }
        XCTAssertEqual(testRows, 1)
        try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "starter_pack")
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testAccountTokensAreStableAndBindPurchasesToTheirUser() async throws {
        let cluster = try await cluster()
        let owner = UUID(), thief = UUID()
        let token = try await cluster.accountToken(owner)
        let tokenAgain = try await cluster.accountToken(owner)
        XCTAssertEqual(token, tokenAgain)
        XCTAssertNotNil(UUID(uuidString: token))
        let thiefToken = try await cluster.accountToken(thief)
        XCTAssertNotEqual(token, thiefToken)

        // The owner's token in the signed payload, submitted by someone else.
        let transactionId = PaymentsCluster.randomTransactionId()
        let signed = try cluster.signedTransaction(transactionId, productCode: "popular_pack", appAccountToken: token)
        await expectRPCError(.alreadyExists, reason: "TRANSACTION_CONFLICT") {
            _ = try await cluster.verify(
                try cluster.verifyRequest(
                    user: thief, productCode: "popular_pack", transactionId: transactionId, signed: signed))
        }
        await expectRPCError(.alreadyExists, reason: "TRANSACTION_CONFLICT") {
            _ = try await cluster.verify(
                try cluster.verifyRequest(
                    user: thief, productCode: "popular_pack", transactionId: transactionId, signed: signed,
                    appAccountToken: thiefToken))
        }
        try await cluster.assertNothingWritten(transactionId, user: thief)
        // The owner gets it.
        let granted = try await cluster.verify(
            try cluster.verifyRequest(
                user: owner, productCode: "popular_pack", transactionId: transactionId, signed: signed,
                appAccountToken: token))
        XCTAssertEqual(granted.outcome, .granted)
        try await cluster.assertGrantedOnce(transactionId, user: owner, productCode: "popular_pack")
        try await cluster.assertPointsInvariants(users: [owner, thief])
    }
}
