import Foundation
import IAPCreditsClient
import XCTest

/// The pure purchase flow (PRD 8.3), event by event: tests are named by
/// state and event, and assert the one action each returns.
final class PurchaseFlowTests: XCTestCase {
    let token = UUID()
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    let offers = PackageOffers.match(packages: Fixtures.packages, products: Fixtures.products)
    var starter: PackageOffer { offers.offer(productCode: "starter_pack")! }

    private func grant(_ status: VerifiedGrant.Status, id: String = "2000000000000001") -> VerifiedGrant {
        VerifiedGrant(
            status: status, productCode: "starter_pack", transactionId: id, creditsAdded: status == .granted ? 100 : 0,
            newBalance: 100, ledgerEventId: "payment.apple_iap:\(id)")
    }

    /// A flow that has just been told StoreKit took payment.
    private func paidFlow(_ transaction: StoreTransaction = Fixtures.transaction(id: "2000000000000001")) throws -> (
        PurchaseFlow, PendingPurchaseRecord
    ) {
        var flow = PurchaseFlow(offers: offers)
        _ = try flow.start(starter, appAccountToken: token)
        guard case .record(let record) = try flow.storeAnswered(.success(.success(.verified(transaction))), now: now)
        else {
            throw XCTSkip("not recording")
        }
        return (flow, record)
    }

    /// A flow waiting for the verify answer.
    private func verifyingFlow() throws -> (PurchaseFlow, PendingPurchaseRecord) {
        var (flow, record) = try paidFlow()
        XCTAssertEqual(try flow.recordAttempted(), .verify(record))
        return (flow, record)
    }

    func testStartWhenIdleShowsTheSheetWithTheUsersAccountToken() throws {
        var flow = PurchaseFlow(offers: offers)
        XCTAssertEqual(
            try flow.start(starter, appAccountToken: token),
            .purchase(productID: "com.meeyao.qianwen.starter_pack", appAccountToken: token))
        XCTAssertEqual(flow.state, .purchasing(starter))
    }

    func testStartWithAnUnavailableOfferCompletesWithoutASheet() throws {
        var flow = PurchaseFlow(offers: offers)
        let unavailable = PackageOffer(package: Fixtures.packages[1], product: nil)
        XCTAssertEqual(try flow.start(unavailable, appAccountToken: token), .complete(.productUnavailable))
    }

    func testStartWhenPurchasingIsRefused() throws {
        var flow = PurchaseFlow(offers: offers)
        _ = try flow.start(starter, appAccountToken: token)
        XCTAssertThrowsError(try flow.start(starter, appAccountToken: token))
    }

    // MARK: PRD 12.3: pending, error, cancel never call the server

    func testStoreAnsweredPendingWhenPurchasingCompletesWithoutVerify() throws {
        var flow = PurchaseFlow(offers: offers)
        _ = try flow.start(starter, appAccountToken: token)
        XCTAssertEqual(try flow.storeAnswered(.success(.pending), now: now), .complete(.pending))
    }

    func testStoreAnsweredCancelledWhenPurchasingCompletesWithoutVerify() throws {
        var flow = PurchaseFlow(offers: offers)
        _ = try flow.start(starter, appAccountToken: token)
        XCTAssertEqual(try flow.storeAnswered(.success(.userCancelled), now: now), .complete(.cancelled))
    }

    func testStoreAnsweredFailureWhenPurchasingCompletesWithoutVerify() throws {
        var flow = PurchaseFlow(offers: offers)
        _ = try flow.start(starter, appAccountToken: token)
        XCTAssertEqual(
            try flow.storeAnswered(.failure(StoreFailure(reason: "networkError")), now: now),
            .complete(.storeFailed(reason: "networkError")))
    }

    func testStoreAnsweredUnverifiedWhenPurchasingCompletesWithoutVerifyOrFinish() throws {
        var flow = PurchaseFlow(offers: offers)
        _ = try flow.start(starter, appAccountToken: token)
        let answer = try flow.storeAnswered(
            .success(.success(.unverified(Fixtures.transaction(id: "5"), reason: "invalidSignature"))), now: now)
        XCTAssertEqual(answer, .complete(.unverifiedByStore(transactionId: "5")))
    }

    // MARK: success → record → verify → finish → refresh

    func testStoreAnsweredVerifiedWhenPurchasingRecordsThePurchase() throws {
        let transaction = Fixtures.transaction(id: "2000000000000001", token: token)
        let (flow, record) = try paidFlow(transaction)
        XCTAssertEqual(record.transactionId, transaction.id)
        XCTAssertEqual(record.productCode, "starter_pack", "mapped back from the App Store product")
        XCTAssertEqual(record.appStoreProductId, "com.meeyao.qianwen.starter_pack")
        XCTAssertEqual(record.signedTransactionInfo, transaction.signedTransactionInfo)
        XCTAssertEqual(record.appAccountToken, token)
        XCTAssertEqual(record.recordedAtUnixMilliseconds, 1_700_000_000_000)
        XCTAssertEqual(flow.state, .recording(record))
    }

    func testStoreAnsweredVerifiedForAnotherProductMapsItsOwnCode() throws {
        var flow = PurchaseFlow(offers: offers)
        _ = try flow.start(starter, appAccountToken: token)
        let other = Fixtures.transaction(id: "7", productID: "com.meeyao.qianwen.premium_pack")
        guard case .record(let record) = try flow.storeAnswered(.success(.success(.verified(other))), now: now) else {
            return XCTFail()
        }
        XCTAssertEqual(record.productCode, "premium_pack")
    }

    func testStoreAnsweredVerifiedForAnUnknownProductIsKeptAndReported() throws {
        var flow = PurchaseFlow(offers: offers)
        _ = try flow.start(starter, appAccountToken: token)
        let stray = Fixtures.transaction(id: "8", productID: "com.elsewhere.thing")
        guard
            case .complete(.refused(let id, let error)) = try flow.storeAnswered(
                .success(.success(.verified(stray))), now: now)
        else {
            return XCTFail()
        }
        XCTAssertEqual(id, "8")
        XCTAssertEqual(error.disposition, .keepAndReport)
    }

    func testRecordAttemptedWhenRecordingVerifies() throws {
        var (flow, record) = try paidFlow()
        XCTAssertEqual(try flow.recordAttempted(), .verify(record))
        XCTAssertEqual(flow.state, .verifying(record))
    }

    /// A recovery pass credited the transaction while the sheet was closing:
    /// no record, no verify, no finish; refreshed, then that credit reported.
    func testSettledElsewhereWhenRecordingRefreshesThenCompletesWithThatSettlement() throws {
        var (flow, _) = try paidFlow()
        XCTAssertEqual(try flow.settledElsewhere(.credited(grant(.granted), balance: nil)), .refresh)
        let balance = CreditBalance(balance: 100, lifetimeEarned: 100, lifetimeSpent: 0)
        XCTAssertEqual(try flow.refreshed(balance: balance), .complete(.credited(grant(.granted), balance: balance)))
        var (revoked, _) = try paidFlow()
        XCTAssertEqual(try revoked.settledElsewhere(.revoked(transactionId: "2000000000000001")), .refresh)
        XCTAssertEqual(try revoked.refreshed(balance: nil), .complete(.revoked(transactionId: "2000000000000001")))
    }

    func testSettledElsewhereWithAnotherTransactionOrNoSettlementIsAViolation() throws {
        var (flow, _) = try paidFlow()
        XCTAssertThrowsError(
            try flow.settledElsewhere(.credited(grant(.granted, id: "2000000000000002"), balance: nil)))
        XCTAssertThrowsError(
            try flow.settledElsewhere(
                .awaitingCredit(transactionId: "2000000000000001", Fixtures.problem(.internalError))))
        var (verifying, _) = try verifyingFlow()
        XCTAssertThrowsError(
            try verifying.settledElsewhere(.credited(grant(.granted), balance: nil)), "only before the record")
    }

    func testVerifyAnsweredGrantedWhenVerifyingFinishesThenRefreshesThenCompletes() throws {
        var (flow, _) = try verifyingFlow()
        XCTAssertEqual(try flow.verifyAnswered(.success(grant(.granted))), .finish(transactionId: "2000000000000001"))
        XCTAssertEqual(try flow.finished(), .refresh)
        let balance = CreditBalance(balance: 100, lifetimeEarned: 100, lifetimeSpent: 0)
        XCTAssertEqual(try flow.refreshed(balance: balance), .complete(.credited(grant(.granted), balance: balance)))
    }

    func testVerifyAnsweredAlreadyGrantedWhenVerifyingStillFinishes() throws {
        var (flow, _) = try verifyingFlow()
        XCTAssertEqual(
            try flow.verifyAnswered(.success(grant(.alreadyGranted))), .finish(transactionId: "2000000000000001"))
        XCTAssertEqual(try flow.finished(), .refresh)
        XCTAssertEqual(try flow.refreshed(balance: nil), .complete(.credited(grant(.alreadyGranted), balance: nil)))
    }

    func testVerifyAnsweredRevokedWhenVerifyingFinishesWithNothingCredited() throws {
        var (flow, _) = try verifyingFlow()
        XCTAssertEqual(
            try flow.verifyAnswered(.failure(Fixtures.problem(.paymentTransactionRevoked, status: 409))),
            .finish(transactionId: "2000000000000001"))
        XCTAssertEqual(try flow.finished(), .refresh)
        XCTAssertEqual(try flow.refreshed(balance: nil), .complete(.revoked(transactionId: "2000000000000001")))
    }

    /// Every failure a verify can meet: only REVOKED finishes; retryable
    /// and unknown ones keep it for a retry, refusals keep it and report it.
    func testVerifyAnsweredAnyFailureWhenVerifyingNeverFinishesUnlessRevoked() throws {
        for error in Fixtures.everyVerifyFailure {
            var (flow, _) = try verifyingFlow()
            let action = try flow.verifyAnswered(.failure(error))
            switch error.disposition {
            case .finish:
                XCTAssertEqual(error.problemCode, .paymentTransactionRevoked)
                XCTAssertEqual(action, .finish(transactionId: "2000000000000001"))
            case .keepAndRetry:
                XCTAssertEqual(
                    action, .complete(.awaitingCredit(transactionId: "2000000000000001", error)), error.description)
            case .keepAndReport:
                XCTAssertEqual(action, .complete(.refused(transactionId: "2000000000000001", error)), error.description)
            }
        }
    }

    func testVerifyAnsweredRetryableCodesWhenVerifyingAwaitCredit() throws {
        for code in [
            ProblemCode.paymentGrantFailed, .paymentAppleUnavailable, .serviceUnavailable, .internalError, .rateLimited,
            .unauthenticated,
        ] {
            var (flow, _) = try verifyingFlow()
            guard case .complete(.awaitingCredit) = try flow.verifyAnswered(.failure(Fixtures.problem(code))) else {
                return XCTFail("\(code) must keep and retry")
            }
        }
    }

    func testVerifyAnsweredEnvironmentNotAllowedWhenVerifyingIsKeptAndReported() throws {
        var (flow, _) = try verifyingFlow()
        let error = Fixtures.problem(.paymentEnvironmentNotAllowed, status: 403, retryable: false)
        XCTAssertEqual(
            try flow.verifyAnswered(.failure(error)), .complete(.refused(transactionId: "2000000000000001", error)))
    }

    // MARK: Abandoned (the client stopped)

    /// Nothing paid before the store answered; once paid, the purchase is
    /// kept unfinished and awaits credit until StoreKit's finish is done;
    /// after that, its settlement stands.
    func testOutcomeIfAbandonedInEachState() throws {
        let stopped = CreditsError(.transport("client stopped"))
        let id = "2000000000000001"
        var flow = PurchaseFlow(offers: offers)
        XCTAssertEqual(flow.outcomeIfAbandoned(stopped), .notStarted(stopped), "idle")
        _ = try flow.start(starter, appAccountToken: token)
        XCTAssertEqual(flow.outcomeIfAbandoned(stopped), .notStarted(stopped), "purchasing")
        var (paid, _) = try paidFlow()
        XCTAssertEqual(paid.outcomeIfAbandoned(stopped), .awaitingCredit(transactionId: id, stopped), "recording")
        _ = try paid.recordAttempted()
        XCTAssertEqual(paid.outcomeIfAbandoned(stopped), .awaitingCredit(transactionId: id, stopped), "verifying")
        _ = try paid.verifyAnswered(.success(grant(.granted)))
        XCTAssertEqual(paid.outcomeIfAbandoned(stopped), .awaitingCredit(transactionId: id, stopped), "finishing")
        _ = try paid.finished()
        XCTAssertEqual(paid.outcomeIfAbandoned(stopped), .credited(grant(.granted), balance: nil), "refreshing")
        _ = try paid.refreshed(balance: nil)
        XCTAssertEqual(paid.outcomeIfAbandoned(stopped), .credited(grant(.granted), balance: nil), "completed")
    }

    // MARK: Events in the wrong state

    func testEventsOutOfOrderAreViolations() throws {
        var idle = PurchaseFlow(offers: offers)
        XCTAssertThrowsError(try idle.storeAnswered(.success(.pending), now: now))
        XCTAssertThrowsError(try idle.recordAttempted())
        XCTAssertThrowsError(try idle.verifyAnswered(.success(grant(.granted))))
        XCTAssertThrowsError(try idle.finished())
        XCTAssertThrowsError(try idle.refreshed(balance: nil))
        var (recording, _) = try paidFlow()
        XCTAssertThrowsError(
            try recording.verifyAnswered(.success(grant(.granted))), "no verify answer before the record")
        var (verifying, _) = try verifyingFlow()
        XCTAssertThrowsError(try verifying.finished(), "never finished before the answer")
        _ = try verifying.verifyAnswered(.failure(Fixtures.problem(.paymentGrantFailed)))
        XCTAssertThrowsError(try verifying.finished(), "never finished after a retryable answer")
    }
}
