import Foundation
import IAPCreditsClient
import IAPCreditsClientTestSupport
import XCTest

/// Durability: paid purchases not yet credited are resubmitted on every
/// launch (a launch is a new client over the same record store and the same
/// StoreKit), credited once and finished once.
final class CreditsClientRecoveryTests: XCTestCase {
    let firstId: UInt64 = 2_100_000_000_000_000
    var nextId: String { String(firstId + 1) }
    let api = FakeCreditsAPI()
    lazy var store = ScriptedStoreFront(
        products: Fixtures.products, firstTransactionId: firstId, signer: Fixtures.signer)
    let records = InMemoryPurchaseRecordStore()

    private func launch(_ configuration: CreditsClientConfiguration = Fixtures.fastConfiguration()) -> CreditsClient {
        CreditsClient(api: api, storeFront: store, records: records, configuration: configuration)
    }

    /// The app paid (StoreKit holds the transaction unfinished) and wrote
    /// its record, then died before the verify call.
    private func paidThenKilled(
        productID: String = "com.meeyao.qianwen.starter_pack", productCode: String = "starter_pack",
        token: UUID? = nil, writeRecord: Bool = true
    ) async throws -> StoreTransaction {
        let outcome = try await store.purchase(productID: productID, appAccountToken: token ?? api.token)
        guard case .success(.verified(let transaction)) = outcome else { throw XCTSkip("not paid") }
        if writeRecord {
            try await records.save(
                PendingPurchaseRecord(transaction: transaction, productCode: productCode, now: Date()))
        }
        return transaction
    }

    func testKilledBetweenPaymentAndVerifyIsCreditedOnceAndFinishedOnceOnRelaunch() async throws {
        let transaction = try await paidThenKilled()
        let client = launch()
        let report = await client.start()
        XCTAssertEqual(report.credited.map(\.transactionId), [transaction.id])
        XCTAssertEqual(report.credited.first?.status, .granted)
        XCTAssertEqual(store.finishCount(transaction.id), 1)
        let verifies = await api.verifyCount
        XCTAssertEqual(verifies, 1)
        let left = await records.allRecords()
        XCTAssertTrue(left.isEmpty)
        await client.stop()

        // A second relaunch finds nothing to do.
        let again = launch()
        let second = await again.start()
        XCTAssertTrue(second.credited.isEmpty)
        let verifiesAfter = await api.verifyCount
        XCTAssertEqual(verifiesAfter, 1)
        await again.stop()
    }

    func testKilledBeforeTheRecordWasWrittenIsFoundThroughStoreKit() async throws {
        let transaction = try await paidThenKilled(
            productID: "com.meeyao.qianwen.popular_pack", productCode: "popular_pack", writeRecord: false)
        let client = launch()
        _ = try await client.packageOffers()
        let report = await client.start()
        XCTAssertEqual(report.credited.map(\.creditsAdded), [210])
        let request = await api.verifyRequests.first
        XCTAssertEqual(request?.productCode, "popular_pack", "mapped from the packages")
        XCTAssertEqual(request?.signedTransactionInfo, transaction.signedTransactionInfo)
        XCTAssertEqual(store.finishCount(transaction.id), 1)
        await client.stop()
    }

    /// Finished in StoreKit, killed before the record was removed: the
    /// resubmission says already_granted and the record goes.
    func testARecordStoreKitAlreadyFinishedIsConfirmedAndRemoved() async throws {
        let transaction = try await paidThenKilled()
        _ = try await api.verify(
            PendingPurchaseRecord(transaction: transaction, productCode: "starter_pack", now: Date()).verifyRequest)
        await store.finish(transactionID: transaction.id)
        let client = launch()
        let report = await client.start()
        XCTAssertEqual(report.credited.map(\.status), [.alreadyGranted])
        XCTAssertEqual(store.finishCount(transaction.id), 1, "finished once, before the crash")
        let left = await records.allRecords()
        XCTAssertTrue(left.isEmpty)
        await client.stop()
    }

    /// Apple refunded a purchase the app had recorded but not yet got
    /// credited: StoreKit hands it back revoked, and that copy (not the one
    /// saved at payment) is what is sent, so a backend that has not yet
    /// heard of the refund does not credit it. The record keeps its
    /// package code and counters, and stores the new copy.
    func testARecordIsResubmittedWithStoreKitsCurrentCopyOfItsTransaction() async throws {
        let transaction = try await paidThenKilled()
        var stored = PendingPurchaseRecord(transaction: transaction, productCode: "starter_pack", now: Date())
        stored.submissionCount = 2
        stored.lastFailure = "transport"
        try await records.save(stored)
        let revoked = try store.refund(transaction.id)
        XCTAssertNotEqual(revoked.signedTransactionInfo, transaction.signedTransactionInfo)
        await api.failVerify(Fixtures.problem(.paymentGrantFailed))
        let client = launch(Fixtures.fastConfiguration(attempts: 1))
        _ = await client.start()
        let first = try await XCTUnwrapAsync(await api.verifyRequests.first)
        XCTAssertEqual(first.signedTransactionInfo, revoked.signedTransactionInfo)
        XCTAssertTrue(first.signedTransactionInfo.contains("-revoked"))
        XCTAssertEqual(first.productCode, "starter_pack")
        let kept = try await XCTUnwrapAsync(await records.allRecords().first)
        XCTAssertEqual(kept.signedTransactionInfo, revoked.signedTransactionInfo)
        XCTAssertEqual(kept.productCode, "starter_pack")
        XCTAssertEqual(kept.submissionCount, 3)
        XCTAssertEqual(kept.recordedAtUnixMilliseconds, stored.recordedAtUnixMilliseconds)
        await client.stop()
    }

    /// A retry scheduled before StoreKit delivered the refund sends the
    /// refunded copy, not the one it was scheduled with.
    func testARetryAfterARefundSendsTheRefundedCopy() async throws {
        let transaction = try await paidThenKilled()
        await api.failVerify(CreditsError(.transport("offline")))
        let client = launch(
            CreditsClientConfiguration(
                retrySchedule: RetrySchedule(
                    initialDelayMilliseconds: 300, maximumDelayMilliseconds: 300, attemptsPerSessionMax: 2),
                unitRandom: { 0.99 }))
        _ = await client.start()
        let revoked = try store.refund(transaction.id)
        let api = self.api
        let resubmitted = await eventually { await api.verifyCount >= 2 }
        XCTAssertTrue(resubmitted)
        let sent = await api.verifyRequests.map(\.signedTransactionInfo)
        XCTAssertEqual(sent.first, transaction.signedTransactionInfo, "before the refund")
        XCTAssertEqual(Array(sent.dropFirst()), [revoked.signedTransactionInfo], "every later submission")
        await client.stop()
    }

    func testRetriesStopAfterTheSessionBudgetAndResumeOnTheNextLaunch() async throws {
        let transaction = try await paidThenKilled()
        for _ in 0..<3 { await api.failVerify(CreditsError(.transport("offline"))) }
        let client = launch(Fixtures.fastConfiguration(attempts: 2))
        let report = await client.start()
        XCTAssertEqual(report.pending.first?.transactionId, transaction.id)
        let exhausted = await eventually {
            await client.pendingPurchases().first?.state == .waitingForNextLaunch(CreditsError(.transport("offline")))
        }
        XCTAssertTrue(exhausted)
        let verifies = await api.verifyCount
        XCTAssertEqual(verifies, 3, "one at launch, two retries")
        XCTAssertEqual(store.finishCount(transaction.id), 0)
        let kept = await records.allRecords()
        XCTAssertEqual(kept.first?.submissionCount, 3)
        XCTAssertEqual(kept.first?.lastFailure, "transport")
        await client.stop()

        let relaunched = launch()
        let second = await relaunched.start()
        XCTAssertEqual(second.credited.map(\.transactionId), [transaction.id])
        XCTAssertEqual(store.finishCount(transaction.id), 1)
        await relaunched.stop()
    }

    func testARefusalIsNotRetriedThisLaunchButIsResubmittedOnTheNext() async throws {
        let transaction = try await paidThenKilled()
        await api.failVerify(Fixtures.problem(.paymentProductMismatch, status: 422))
        let client = launch()
        let report = await client.start()
        XCTAssertEqual(report.pending.map(\.state), [.refused(Fixtures.problem(.paymentProductMismatch, status: 422))])
        try await Task.sleep(nanoseconds: 200_000_000)
        let verifies = await api.verifyCount
        XCTAssertEqual(verifies, 1, "no retry of a refusal in the same launch")
        XCTAssertEqual(store.unfinishedIds, [transaction.id], "never finished silently")
        await client.stop()

        let relaunched = launch()
        let second = await relaunched.start()
        XCTAssertEqual(second.credited.map(\.transactionId), [transaction.id])
        await relaunched.stop()
    }

    func testAnotherAccountsPurchaseIsLeftForThatAccount() async throws {
        let owner = UUID()
        let transaction = try await paidThenKilled(token: owner)
        let client = launch()
        let report = await client.start()
        XCTAssertEqual(report.pending.map(\.state), [.otherAccount])
        let verifies = await api.verifyCount
        XCTAssertEqual(verifies, 0)
        XCTAssertEqual(store.unfinishedIds, [transaction.id])
        let kept = await records.allRecords()
        XCTAssertEqual(kept.map(\.transactionId), [transaction.id])
        await client.stop()
    }

    /// The new user pack is no longer listed once credited: a transaction
    /// of it still unfinished is named by the gateway's transaction route.
    func testAProductNoLongerListedIsResolvedThroughTheTransactionRoute() async throws {
        let transaction = try await paidThenKilled(
            productID: "com.meeyao.qianwen.new_user_pack", productCode: "new_user_pack", writeRecord: false)
        await api.setPackages(Array(Fixtures.packages.dropFirst()))
        await api.setStatus(
            TransactionStatus(
                transactionId: transaction.id, originalTransactionId: transaction.id, productCode: "new_user_pack",
                appStoreProductId: "com.meeyao.qianwen.new_user_pack", environment: "Production", status: .granted,
                credits: 60,
                purchaseDate: "2024-01-01T00:00:00.000Z", revocationDate: nil, ledgerEventId: nil))
        let client = launch()
        let report = await client.start()
        XCTAssertEqual(report.credited.map(\.productCode), ["new_user_pack"])
        let statusCalls = await api.statusCalls
        XCTAssertEqual(statusCalls, [transaction.id])
        XCTAssertEqual(store.finishCount(transaction.id), 1)
        await client.stop()
    }

    func testAnUnknownProductTheGatewayDoesNotKnowIsKeptAndReported() async throws {
        let transaction = try await paidThenKilled(
            productID: "com.meeyao.qianwen.new_user_pack", productCode: "new_user_pack", writeRecord: false)
        await api.setPackages(Array(Fixtures.packages.dropFirst()))
        let client = launch()
        let report = await client.start()
        XCTAssertEqual(report.pending.map(\.state), [.unknownProduct])
        XCTAssertEqual(report.pending.first?.advice, .contactSupport)
        XCTAssertEqual(store.unfinishedIds, [transaction.id])
        await client.stop()
    }

    func testAnApprovedPendingPurchaseArrivesAsAnUpdateAndIsCredited() async throws {
        let client = launch()
        let events = EventCollector(client)
        _ = await client.start()
        let offers = try await client.packageOffers()
        store.script(.pending)
        let outcome = await client.purchase(try XCTUnwrap(offers.offer(productCode: "starter_pack")))
        XCTAssertEqual(outcome, .pending)
        let none = await api.verifyCount
        XCTAssertEqual(none, 0)

        let approved = try store.deliverNewPurchase(
            productID: "com.meeyao.qianwen.starter_pack", appAccountToken: api.token)
        let credited = await eventually { events.creditedIds == [approved.id] }
        XCTAssertTrue(credited)
        XCTAssertEqual(store.finishCount(approved.id), 1)
        await client.stop()
    }

    func testAnUnverifiedUpdateIsReportedAndNeverSubmitted() async throws {
        let client = launch()
        let events = EventCollector(client)
        _ = await client.start()
        store.deliver(
            .unverified(Fixtures.transaction(id: "2100000000000777", token: api.token), reason: "invalidSignature"))
        let reported = await eventually {
            events.events.contains {
                if case .pendingPurchaseChanged(let summary) = $0 {
                    summary.transactionId == "2100000000000777"
                } else {
                    false
                }
            }
        }
        XCTAssertTrue(reported)
        let verifies = await api.verifyCount
        XCTAssertEqual(verifies, 0)
        XCTAssertEqual(store.unfinishedIds, ["2100000000000777"])
        await client.stop()
    }

    /// A refund StoreKit delivers after the credit: submitted (the gateway
    /// answers REVOKED), finished, and the balance refreshed.
    func testARefundUpdateIsFinishedAndRefreshesTheBalance() async throws {
        let client = launch()
        let events = EventCollector(client)
        _ = await client.start()
        let offers = try await client.packageOffers()
        guard
            case .credited(let grant, _) = await client.purchase(
                try XCTUnwrap(offers.offer(productCode: "starter_pack")))
        else { return XCTFail() }
        await api.failVerify(Fixtures.problem(.paymentTransactionRevoked, status: 409))
        let balanceEvents = events.events.filter { if case .balanceChanged = $0 { true } else { false } }.count
        try store.refund(grant.transactionId)
        let revoked = await eventually { events.revokedIds == [grant.transactionId] }
        XCTAssertTrue(revoked)
        XCTAssertEqual(store.finishCount(grant.transactionId), 2, "the purchase, then the refund StoreKit delivered")
        XCTAssertEqual(store.redundantFinishCount, 0)
        XCTAssertTrue(store.unfinishedIds.isEmpty)
        let refreshed = await eventually {
            events.events.filter { if case .balanceChanged = $0 { true } else { false } }.count > balanceEvents
        }
        XCTAssertTrue(refreshed)
        let verifies = await api.verifyCount
        XCTAssertEqual(verifies, 2)
        await client.stop()
    }

    /// StoreKit redelivers unfinished transactions at launch while the
    /// launch pass submits them: one credit, one finish.
    func testARedeliveryDuringTheLaunchPassIsNotSubmittedTwice() async throws {
        let transaction = try await paidThenKilled()
        let client = launch()
        store.deliver(.verified(transaction))
        _ = await client.start()
        store.deliver(.verified(transaction))
        try await Task.sleep(nanoseconds: 100_000_000)
        XCTAssertEqual(store.finishCount(transaction.id), 1)
        let credited = await api.creditedIds()
        XCTAssertEqual(credited, [transaction.id])
        await client.stop()
    }

    /// The account token answered 503 with Retry-After 7: the pass waits
    /// for it, and a foreground does not ask again sooner.
    func testAPassWithoutAnAccountTokenWaitsOutTheRetryAfter() async throws {
        _ = try await paidThenKilled()
        let unavailable = CreditsError(
            .problem(GatewayProblem(code: .serviceUnavailable, status: 503, retryable: true)), requestID: "r",
            retryAfterSeconds: 7)
        await api.failAccountToken(unavailable)
        let client = launch()
        let report = await client.start()
        XCTAssertEqual(report.failure, unavailable)
        try await Task.sleep(nanoseconds: 200_000_000)
        let resumed = await client.resumePendingPurchases()
        XCTAssertEqual(resumed.failure, unavailable, "still waiting")
        let asked = await api.accountTokenCalls
        XCTAssertEqual(asked, 1, "not before the Retry-After, though the backoff (20 ms) is long past")
        let verifies = await api.verifyCount
        XCTAssertEqual(verifies, 0)
        await client.stop()
    }

    /// A pass retry that succeeded gives the next failure a fresh budget:
    /// here the account token failed once at launch, and later the gateway
    /// could not say which package a delivered purchase was twice in a row
    /// (a budget of 2 pass retries).
    func testThePassRetryBudgetStartsAgainAfterAPassThatRan() async throws {
        await api.failAccountToken(CreditsError(.transport("offline")))
        let client = launch(Fixtures.fastConfiguration(attempts: 2))
        let report = await client.start()
        XCTAssertNotNil(report.failure)
        let api = self.api
        let ran = await eventually { await api.accountTokenCalls == 2 }
        XCTAssertTrue(ran)
        try await Task.sleep(nanoseconds: 100_000_000)

        await api.setPackages(Array(Fixtures.packages.dropFirst()))
        await api.failStatus(CreditsError(.transport("offline")), CreditsError(.transport("offline")))
        await api.setStatus(
            TransactionStatus(
                transactionId: nextId, originalTransactionId: nextId, productCode: "new_user_pack",
                appStoreProductId: "com.meeyao.qianwen.new_user_pack", environment: "Production", status: .verified,
                credits: 60,
                purchaseDate: "2024-01-01T00:00:00.000Z", revocationDate: nil, ledgerEventId: nil))
        let bought = try store.deliverNewPurchase(
            productID: "com.meeyao.qianwen.new_user_pack", appAccountToken: api.token)
        XCTAssertEqual(bought.id, nextId)
        let store = self.store
        let credited = await eventually(timeoutMilliseconds: 2_000) { store.finishCount(bought.id) == 1 }
        XCTAssertTrue(credited)
        let statusCalls = await api.statusCalls
        XCTAssertEqual(statusCalls, [bought.id, bought.id, bought.id])
        await client.stop()
    }

    func testNoAccountTokenAtLaunchIsRetriedWithBackoff() async throws {
        let transaction = try await paidThenKilled()
        await api.failAccountToken(CreditsError(.transport("offline")))
        let client = launch()
        let report = await client.start()
        XCTAssertEqual(report.failure, CreditsError(.transport("offline")))
        let store = self.store
        let credited = await eventually { store.finishCount(transaction.id) == 1 }
        XCTAssertTrue(credited)
        await client.stop()
    }
}
