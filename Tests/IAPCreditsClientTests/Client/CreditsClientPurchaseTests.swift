import Foundation
import IAPCreditsClient
import IAPCreditsClientTestSupport
import XCTest

/// PRD 12.3 through the client with a fake gateway and a fake StoreKit:
/// what is called, in which order, and what is finished.
final class CreditsClientPurchaseTests: XCTestCase {
    let firstId: UInt64 = 2_000_000_000_000_000
    var nextId: String { String(firstId + 1) }

    private struct Setup {
        let log: CallLog
        let api: FakeCreditsAPI
        let store: ScriptedStoreFront
        let records: LoggingRecordStore
        let client: CreditsClient
        let events: EventCollector
    }

    private func setup(
        configuration: CreditsClientConfiguration = Fixtures.fastConfiguration(),
        failWrites: Bool = false
    ) -> Setup {
        let log = CallLog()
        let api = FakeCreditsAPI(observer: { log.note($0) })
        let store = ScriptedStoreFront(
            products: Fixtures.products, firstTransactionId: firstId, signer: Fixtures.signer)
        store.observeCalls { log.note($0) }
        let records = LoggingRecordStore(log: log, failWrites: failWrites)
        let client = CreditsClient(api: api, storeFront: store, records: records, configuration: configuration)
        return Setup(log: log, api: api, store: store, records: records, client: client, events: EventCollector(client))
    }

    /// Retries far in the future: what a purchase does by itself.
    private var noRetries: CreditsClientConfiguration {
        CreditsClientConfiguration(
            retrySchedule: RetrySchedule(
                initialDelayMilliseconds: 600_000, maximumDelayMilliseconds: 600_000, attemptsPerSessionMax: 1))
    }

    func testOffersMapPackagesToStoreKitProductsWithStoreKitPrices() async throws {
        let s = setup()
        let offers = try await s.client.packageOffers()
        XCTAssertEqual(offers.offers.map(\.displayPrice), ["¥6.00", "¥12.00", "¥25.00", "¥50.00"])
        XCTAssertTrue(offers.isStarterPackEligible)
        s.store.setProductsFailure("offline")
        let withoutStoreKit = try await s.client.packageOffers()
        XCTAssertEqual(withoutStoreKit.offers.filter(\.isAvailable).count, 0, "cards disabled, screen still shown")
        await s.client.stop()
    }

    /// success → record → verify → finish → refresh, in that order.
    func testAPaidPurchaseIsVerifiedThenFinishedThenRefreshed() async throws {
        let s = setup()
        let offers = try await s.client.packageOffers()
        let starter = try XCTUnwrap(offers.offer(productCode: "starter_pack"))
        let before = s.log.calls.count
        let outcome = await s.client.purchase(starter)

        guard case .credited(let grant, let balance) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(grant.status, .granted)
        XCTAssertEqual(grant.creditsAdded, 100)
        XCTAssertEqual(balance?.balance, 100)
        XCTAssertEqual(
            Array(s.log.calls.dropFirst(before)),
            ["accountToken", "purchase", "save", "verify", "finish", "remove", "balance", "packages", "products"])
        XCTAssertEqual(s.store.lastPurchaseAccountToken, s.api.token, "bought with the user's appAccountToken")
        let request = try await XCTUnwrapAsync(await s.api.verifyRequests.first)
        XCTAssertEqual(request.productCode, "starter_pack")
        XCTAssertEqual(request.appStoreProductId, "com.meeyao.qianwen.starter_pack")
        XCTAssertEqual(request.transactionId, nextId)
        XCTAssertEqual(request.appAccountToken, s.api.token)
        XCTAssertEqual(s.store.finishCount(nextId), 1)
        XCTAssertTrue(s.store.unfinishedIds.isEmpty)
        let left = try await s.records.allRecords()
        XCTAssertTrue(left.isEmpty)
        let id = nextId
        let announced = await eventually { s.events.creditedIds == [id] }
        XCTAssertTrue(announced)
        await s.client.stop()
    }

    func testAlreadyGrantedStillFinishesAndRefreshes() async throws {
        let s = setup()
        let offers = try await s.client.packageOffers()
        // The gateway credited this transaction before (a lost answer).
        _ = try await s.api.verify(
            VerifyTransactionRequest(
                productCode: "popular_pack", appStoreProductId: "com.meeyao.qianwen.popular_pack",
                transactionId: nextId, signedTransactionInfo: "x", appAccountToken: nil))
        let before = s.log.calls.count
        let outcome = await s.client.purchase(try XCTUnwrap(offers.offer(productCode: "popular_pack")))
        guard case .credited(let grant, _) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(grant.status, .alreadyGranted)
        XCTAssertEqual(grant.creditsAdded, 0)
        XCTAssertEqual(s.store.finishCount(nextId), 1)
        XCTAssertEqual(
            Array(s.log.calls.dropFirst(before)),
            ["accountToken", "purchase", "save", "verify", "finish", "remove", "balance", "packages", "products"])
        await s.client.stop()
    }

    /// PRD 12.3: pending, error and cancel never call the server.
    func testPendingCancelledFailedAndUnverifiedNeverCallTheServer() async throws {
        let s = setup()
        let offers = try await s.client.packageOffers()
        let starter = try XCTUnwrap(offers.offer(productCode: "starter_pack"))
        s.store.script(.pending, .cancel, .fail("networkError"), .payUnverified)
        let before = s.log.calls.count
        let outcomes = [
            await s.client.purchase(starter), await s.client.purchase(starter), await s.client.purchase(starter),
            await s.client.purchase(starter),
        ]
        XCTAssertEqual(outcomes[0], .pending)
        XCTAssertEqual(outcomes[1], .cancelled)
        guard case .storeFailed = outcomes[2] else { return XCTFail("\(outcomes[2])") }
        XCTAssertEqual(outcomes[3], .unverifiedByStore(transactionId: nextId))
        XCTAssertEqual(Set(s.log.calls.dropFirst(before)), ["purchase", "accountToken"], "only StoreKit was asked")
        let verifies = await s.api.verifyCount
        XCTAssertEqual(verifies, 0)
        XCTAssertEqual(s.store.unfinishedIds, [nextId], "the unverified one is kept, never finished")
        let pending = await s.client.pendingPurchases()
        XCTAssertEqual(pending.map(\.transactionId), [nextId])
        XCTAssertEqual(pending.first?.advice, .contactSupport)
        await s.client.stop()
    }

    func testAnUnavailableOfferAndASecondTapDoNotBuy() async throws {
        let gated = GatedStoreFront(Fixtures.store())
        let api = FakeCreditsAPI()
        let client = CreditsClient(
            api: api, storeFront: gated, records: InMemoryPurchaseRecordStore(), configuration: noRetries)
        let offers = try await client.packageOffers()
        let starter = try XCTUnwrap(offers.offer(productCode: "starter_pack"))
        let first = Task { await client.purchase(starter) }
        let sheetUp = await eventually { gated.sheetsWaiting == 1 }
        XCTAssertTrue(sheetUp)
        let second = await client.purchase(starter)
        XCTAssertEqual(second, .alreadyInProgress)
        gated.release()
        guard case .credited = await first.value else { return XCTFail() }
        let unavailable = await client.purchase(PackageOffer(package: Fixtures.packages[3], product: nil))
        XCTAssertEqual(unavailable, .productUnavailable)
        XCTAssertEqual(gated.inner.purchaseCount, 1)
        await client.stop()
    }

    /// A purchase of the premium pack and a recovery pass meeting its
    /// transaction: the pass's verify is held until the purchase path
    /// reached its own (it must join the one in flight: one call), then
    /// answered (`verifyFailure` first, when given). The purchase's outcome,
    /// the collected events and the stores, once both paths are done.
    private func purchaseRacingARecoveryPass(verifyFailure: CreditsError? = nil) async throws
        -> (outcome: PurchaseOutcome, events: EventCollector, gated: GatedStoreFront, verifies: Int)
    {
        let gated = GatedStoreFront(Fixtures.store(), afterPayment: true)
        let api = FakeCreditsAPI()
        let client = CreditsClient(
            api: api, storeFront: gated, records: InMemoryPurchaseRecordStore(), configuration: noRetries)
        let events = EventCollector(client)
        let offers = try await client.packageOffers()
        let premium = try XCTUnwrap(offers.offer(productCode: "premium_pack"))
        if let verifyFailure { await api.failVerify(verifyFailure) }
        await api.holdVerifies()
        let purchase = Task { await client.purchase(premium) }
        let paid = await eventually { gated.sheetsWaiting == 1 }
        XCTAssertTrue(paid, "the transaction is made, the purchase call not yet answered")
        let pass = Task { await client.resumePendingPurchases() }
        let recoveryVerifying = await eventually { await api.verifiesWaiting == 1 }
        XCTAssertTrue(recoveryVerifying)
        gated.release()
        // The purchase path reaches its verify: it joins the one in flight.
        try await Task.sleep(nanoseconds: 100_000_000)
        let calls = await api.verifyCount
        XCTAssertEqual(calls, 1)
        await api.releaseVerifies()
        let outcome = await purchase.value
        _ = await pass.value
        let verifies = await api.verifyCount
        await client.stop()
        return (outcome, events, gated, verifies)
    }

    /// A recovery pass (the app came to the foreground) that meets the
    /// transaction the purchase call is still returning submits it first;
    /// the purchase path shares that verify instead of calling again: one
    /// call, the same credits for both, one `credited` event.
    func testThePurchasePathSharesAVerifyARecoveryPassStartedFirst() async throws {
        let race = try await purchaseRacingARecoveryPass()
        guard case .credited(let grant, _) = race.outcome else { return XCTFail("not credited") }
        XCTAssertEqual(grant.status, .granted)
        XCTAssertGreaterThan(grant.creditsAdded, 0, "the purchase reports the credits, not 0")
        XCTAssertEqual(race.verifies, 1)
        let announced = await eventually { race.events.creditedIds == [grant.transactionId] }
        XCTAssertTrue(announced, "\(race.events.creditedIds)")
        try await Task.sleep(nanoseconds: 50_000_000)
        XCTAssertEqual(race.events.creditedIds, [grant.transactionId], "one credited event")
        XCTAssertEqual(race.gated.inner.finishCount(grant.transactionId), 1)
        XCTAssertEqual(race.gated.inner.redundantFinishCount, 0, "one finish for the shared answer")
    }

    /// As above, but the shared verify answers REVOKED: both paths learn it,
    /// the app hears `revoked` once and StoreKit's finish runs once.
    func testARevocationLearnedByBothPathsIsAnnouncedOnce() async throws {
        let race = try await purchaseRacingARecoveryPass(
            verifyFailure: Fixtures.problem(.paymentTransactionRevoked, status: 409))
        guard case .revoked(let transactionId) = race.outcome else { return XCTFail("not revoked") }
        XCTAssertEqual(race.verifies, 1)
        let announced = await eventually { race.events.revokedIds == [transactionId] }
        XCTAssertTrue(announced, "\(race.events.revokedIds)")
        try await Task.sleep(nanoseconds: 50_000_000)
        XCTAssertEqual(race.events.revokedIds, [transactionId], "one revoked event")
        XCTAssertEqual(race.gated.inner.finishCount(transactionId), 1)
    }

    /// The sheet closed and the app came to the foreground: a recovery pass
    /// found the transaction unfinished, credited it, finished it and
    /// removed its record before the purchase call got its answer. The
    /// purchase reports that credit; it neither writes a record for the
    /// finished transaction nor verifies or finishes it again.
    func testThePurchasePathReportsACreditARecoveryPassAlreadySettled() async throws {
        let gated = GatedStoreFront(Fixtures.store(), afterPayment: true)
        let api = FakeCreditsAPI()
        let records = LoggingRecordStore()
        let client = CreditsClient(api: api, storeFront: gated, records: records, configuration: noRetries)
        let events = EventCollector(client)
        let offers = try await client.packageOffers()
        let premium = try XCTUnwrap(offers.offer(productCode: "premium_pack"))
        let purchase = Task { await client.purchase(premium) }
        let paid = await eventually { gated.sheetsWaiting == 1 }
        XCTAssertTrue(paid, "the transaction is made, the purchase call not yet answered")
        let pass = await client.resumePendingPurchases()
        XCTAssertEqual(pass.credited.map(\.creditsAdded), [415])
        gated.release()
        guard case .credited(let grant, _) = await purchase.value else { return XCTFail("not credited") }
        XCTAssertEqual(grant.status, .granted)
        XCTAssertEqual(grant.creditsAdded, 415, "the credits the pass got, not the already_granted 0")
        let verifies = await api.verifyCount
        XCTAssertEqual(verifies, 1)
        XCTAssertEqual(gated.inner.finishCount(grant.transactionId), 1)
        XCTAssertEqual(gated.inner.redundantFinishCount, 0)
        let left = try await records.allRecords()
        XCTAssertTrue(left.isEmpty, "no record written for a finished transaction")
        let pending = await client.pendingPurchases()
        XCTAssertTrue(pending.isEmpty)
        let announced = await eventually { events.creditedIds == [grant.transactionId] }
        XCTAssertTrue(announced, "\(events.creditedIds)")
        await client.stop()
    }

    /// The new user pack was bought on another device: this device's list
    /// still shows it, but the packages are read again before the sheet, so
    /// the user is not charged for a pack the backend refuses
    /// (PAYMENT_STARTER_PACK_INELIGIBLE, a manual refund).
    func testAStarterPackGoneFromThePackagesIsNotBought() async throws {
        let s = setup()
        let offers = try await s.client.packageOffers()
        let pack = try XCTUnwrap(offers.offer(productCode: "new_user_pack"))
        await s.api.setPackages(Fixtures.packages.filter { $0.productCode != "new_user_pack" })
        let outcome = await s.client.purchase(pack)
        XCTAssertEqual(outcome, .productUnavailable)
        XCTAssertEqual(s.store.purchaseCount, 0)
        let verifies = await s.api.verifyCount
        XCTAssertEqual(verifies, 0)
        let hidden = await eventually {
            s.events.offerLists.last.map { $0.offer(productCode: "new_user_pack") == nil } ?? false
        }
        XCTAssertTrue(hidden, "the app is told the pack is gone")
        await s.client.stop()
    }

    /// Still listed: bought, after the packages were read again; when they
    /// cannot be read, the pack is not bought (its eligibility is unknown).
    func testAStarterPackIsBoughtOnlyOnceThePackagesStillListIt() async throws {
        let s = setup()
        let offers = try await s.client.packageOffers()
        let pack = try XCTUnwrap(offers.offer(productCode: "new_user_pack"))
        await s.api.failPackages(CreditsError(.transport("offline")))
        let offline = await s.client.purchase(pack)
        XCTAssertEqual(offline, .notStarted(CreditsError(.transport("offline"))))
        XCTAssertEqual(s.store.purchaseCount, 0)
        let before = s.log.calls.count
        guard case .credited(let grant, _) = await s.client.purchase(pack) else { return XCTFail() }
        XCTAssertEqual(grant.creditsAdded, 60)
        XCTAssertEqual(
            Array(s.log.calls.dropFirst(before).prefix(3)), ["packages", "products", "purchase"],
            "read again before the sheet")
        await s.client.stop()
    }

    /// Any package from a list older than `ClientLimits.offersReuseSecondsMax`
    /// is checked against a fresh one; a fresher list is trusted.
    func testAnOfferFromAStaleListIsCheckedAgainstTheGateway() async throws {
        let clock = ManualClock()
        var configuration = noRetries
        configuration.now = { clock.now }
        let s = setup(configuration: configuration)
        let offers = try await s.client.packageOffers()
        let popular = try XCTUnwrap(offers.offer(productCode: "popular_pack"))
        clock.advance(seconds: Double(ClientLimits.offersReuseSecondsMax - 1))
        let before = s.log.calls.count
        guard case .credited = await s.client.purchase(popular) else { return XCTFail() }
        XCTAssertEqual(
            Array(s.log.calls.dropFirst(before).prefix(2)), ["accountToken", "purchase"], "a fresh list is trusted")
        // The list refreshed after that credit is the one shown; it grows stale.
        await s.api.setPackages(Fixtures.packages.filter { $0.productCode != "popular_pack" })
        clock.advance(seconds: Double(ClientLimits.offersReuseSecondsMax + 1))
        let stale = await s.client.purchase(popular)
        XCTAssertEqual(stale, .productUnavailable)
        XCTAssertEqual(s.store.purchaseCount, 1)
        await s.client.stop()
    }

    func testNoAccountTokenNoPurchase() async throws {
        let s = setup()
        let offers = try await s.client.packageOffers()
        await s.api.failAccountToken(CreditsError(.transport("offline")))
        let outcome = await s.client.purchase(try XCTUnwrap(offers.offer(productCode: "starter_pack")))
        XCTAssertEqual(outcome, .notStarted(CreditsError(.transport("offline"))))
        XCTAssertEqual(s.store.purchaseCount, 0)
        await s.client.stop()
    }

    /// Every failure a verify can meet, through the client: only REVOKED
    /// finishes; everything else stays unfinished and recorded, with the
    /// error's message for the user.
    func testEveryVerifyFailureFinishesOnlyWhenRevoked() async throws {
        for error in Fixtures.everyVerifyFailure {
            let s = setup(configuration: noRetries)
            let offers = try await s.client.packageOffers()
            await s.api.failVerify(error)
            let outcome = await s.client.purchase(try XCTUnwrap(offers.offer(productCode: "starter_pack")))
            let records = try await s.records.allRecords()
            switch error.disposition {
            case .finish:
                XCTAssertEqual(outcome, .revoked(transactionId: nextId))
                XCTAssertEqual(s.store.finishCount(nextId), 1)
                XCTAssertTrue(records.isEmpty)
                let id = nextId
                let announced = await eventually { s.events.revokedIds == [id] }
                XCTAssertTrue(announced)
            case .keepAndRetry:
                XCTAssertEqual(outcome, .awaitingCredit(transactionId: nextId, error), error.description)
                XCTAssertEqual(s.store.finishCount(nextId), 0, error.description)
                XCTAssertNotNil(records.first?.lastFailure)
                if let code = error.problemCode { XCTAssertEqual(records.first?.lastFailure, code.wireCode) }
                XCTAssertEqual(records.first?.submissionCount, 1)
            case .keepAndReport:
                XCTAssertEqual(outcome, .refused(transactionId: nextId, error), error.description)
                XCTAssertEqual(s.store.finishCount(nextId), 0, error.description)
                XCTAssertEqual(records.map(\.transactionId), [nextId])
                let pending = await s.client.pendingPurchases()
                XCTAssertEqual(pending.first?.state, .refused(error))
            }
            XCTAssertEqual(
                outcome.localizedMessage(.english),
                error.disposition == .finish
                    ? LocalizedMessages.text(for: .problem(.paymentTransactionRevoked), in: .english)
                    : error.localizedMessage(.english))
            XCTAssertEqual(outcome.advice, error.advice)
            await s.client.stop()
        }
    }

    /// A refusal that says the package list is stale (the new user pack
    /// already bought by this email on another device) refreshes it, so the
    /// offer disappears before the user pays for it a second time.
    func testARefusalThatMeansTheOffersChangedRefreshesThem() async throws {
        for code in ProblemCode.allKnown {
            let s = setup(configuration: noRetries)
            let offers = try await s.client.packageOffers()
            let before = await s.api.packagesCalls
            await s.api.setPackages(Fixtures.packages.filter { $0.productCode != "new_user_pack" })
            await s.api.failVerify(Fixtures.problem(code, status: code.policy.disposition == .finish ? 409 : 422))
            _ = await s.client.purchase(try XCTUnwrap(offers.offer(productCode: "starter_pack")))
            let after = await s.api.packagesCalls
            if code.meansOffersChanged {
                XCTAssertEqual(after, before + 1, "\(code)")
                let hidden = await eventually {
                    s.events.offerLists.last.map { $0.offer(productCode: "new_user_pack") == nil } ?? false
                }
                XCTAssertTrue(hidden, "\(code): the app is told, and the bought pack is gone")
            } else if code.policy.disposition == .keepAndReport {
                XCTAssertEqual(after, before, "\(code): no refresh for a refusal that says nothing of the packages")
            }
            await s.client.stop()
        }
    }

    /// A retry never comes sooner than the answer's Retry-After.
    /// PRODUCT_NOT_FOUND after the catalog re-keyed the product: the
    /// packages are refreshed, the request rebuilt with the code they now
    /// give the App Store product, and resubmitted once (protocol 4.2).
    func testAProductNotFoundIsRebuiltFromTheRefreshedPackagesAndResubmittedOnce() async throws {
        let s = setup(configuration: noRetries)
        let offers = try await s.client.packageOffers()
        await s.api.setPackages(Self.packages(renaming: "premium_pack", to: "premium_pack_v2"))
        await s.api.failVerify(Fixtures.problem(.paymentProductNotFound, status: 404))
        let outcome = await s.client.purchase(try XCTUnwrap(offers.offer(productCode: "premium_pack")))
        guard case .credited = outcome else { return XCTFail("\(outcome)") }
        let codes = await s.api.verifyRequests.map(\.productCode)
        XCTAssertEqual(codes, ["premium_pack", "premium_pack_v2"])
        XCTAssertEqual(s.store.finishCount(nextId), 1)
        // Refused again after the rebuild: reported and kept, not rebuilt a second time.
        let t = setup(configuration: noRetries)
        let stale = try await t.client.packageOffers()
        await t.api.setPackages(Self.packages(renaming: "starter_pack", to: "starter_pack_v2"))
        await t.api.failVerify(
            Fixtures.problem(.paymentProductNotFound, status: 404),
            Fixtures.problem(.paymentProductNotFound, status: 404))
        let kept = await t.client.purchase(try XCTUnwrap(stale.offer(productCode: "starter_pack")))
        guard case .refused = kept else { return XCTFail("\(kept)") }
        let twice = await t.api.verifyRequests.map(\.productCode)
        XCTAssertEqual(twice, ["starter_pack", "starter_pack_v2"])
        XCTAssertEqual(t.store.finishCount(nextId), 0)
        // A code the packages still give: nothing to rebuild.
        let u = setup(configuration: noRetries)
        let same = try await u.client.packageOffers()
        await u.api.failVerify(Fixtures.problem(.paymentProductNotFound, status: 404))
        _ = await u.client.purchase(try XCTUnwrap(same.offer(productCode: "starter_pack")))
        let once = await u.api.verifyCount
        XCTAssertEqual(once, 1)
        await s.client.stop()
        await t.client.stop()
        await u.client.stop()
    }

    /// The catalog with one package's code changed, its App Store product kept.
    private static func packages(renaming code: String, to newCode: String) -> [CreditPackage] {
        Fixtures.packages.map { package in
            package.productCode != code
                ? package
                : CreditPackage(
                    productCode: newCode, appStoreProductId: package.appStoreProductId, kind: package.kind,
                    credits: package.credits,
                    displayName: package.displayName, price: package.price, currency: package.currency)
        }
    }

    /// Buys the premium pack, its verify answered 503 with Retry-After 7:
    /// the transaction id of the purchase now awaiting credit.
    private func purchaseAnsweredRetryAfterSeven(_ s: Setup) async throws -> String {
        let offers = try await s.client.packageOffers()
        let unavailable = CreditsError(
            .problem(GatewayProblem(code: .serviceUnavailable, status: 503, retryable: true)), requestID: "r",
            retryAfterSeconds: 7)
        await s.api.failVerify(unavailable)
        let outcome = await s.client.purchase(try XCTUnwrap(offers.offer(productCode: "premium_pack")))
        var id: String?
        if case .awaitingCredit(let awaiting, _) = outcome { id = awaiting }
        return try XCTUnwrap(id, "\(outcome)")
    }

    /// The delay before the next attempt `pending` gives for `transactionId`.
    private func nextAttemptMilliseconds(_ transactionId: String, in pending: [PendingPurchaseSummary]) -> Int64? {
        guard case .awaitingCredit(_, let next)? = pending.first(where: { $0.transactionId == transactionId })?.state
        else { return nil }
        return next
    }

    func testARetryWaitsAtLeastTheAnswersRetryAfter() async throws {
        let s = setup()
        let id = try await purchaseAnsweredRetryAfterSeven(s)
        let pending = await s.client.pendingPurchases()
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(nextAttemptMilliseconds(id, in: pending), "\(pending)"), 7_000)
        await s.client.stop()
    }

    /// The app comes to the foreground a moment after a 503 with
    /// Retry-After 7: the purchase is not posted again before its time.
    func testAForegroundDoesNotCutARetryAfterShort() async throws {
        let s = setup()
        let id = try await purchaseAnsweredRetryAfterSeven(s)
        let report = await s.client.resumePendingPurchases()
        let verifies = await s.api.verifyCount
        XCTAssertEqual(verifies, 1, "not before the Retry-After")
        XCTAssertGreaterThanOrEqual(
            try XCTUnwrap(nextAttemptMilliseconds(id, in: report.pending), "\(report.pending)"), 7_000)
        await s.client.stop()
    }

    /// Nor during a backoff: its timer resubmits it.
    func testAForegroundDoesNotCutABackoffShort() async throws {
        let t = setup(configuration: noRetries)
        let again = try await t.client.packageOffers()
        await t.api.failVerify(CreditsError(.transport("offline")))
        guard case .awaitingCredit = await t.client.purchase(try XCTUnwrap(again.offer(productCode: "premium_pack")))
        else { return XCTFail() }
        _ = await t.client.resumePendingPurchases()
        let once = await t.api.verifyCount
        XCTAssertEqual(once, 1, "not before the backoff")
        await t.client.stop()
    }

    /// This launch's retries used up: a foreground resubmits it at once.
    func testAForegroundResubmitsAPurchaseWhoseRetriesAreUsedUp() async throws {
        let s = setup(configuration: Fixtures.fastConfiguration(attempts: 1))
        let offers = try await s.client.packageOffers()
        await s.api.failVerify(CreditsError(.transport("offline")), CreditsError(.transport("offline")))
        guard
            case .awaitingCredit(let id, _) = await s.client.purchase(
                try XCTUnwrap(offers.offer(productCode: "premium_pack")))
        else {
            return XCTFail()
        }
        let exhausted = await eventually {
            await s.client.pendingPurchases().first?.state == .waitingForNextLaunch(CreditsError(.transport("offline")))
        }
        XCTAssertTrue(exhausted)
        let report = await s.client.resumePendingPurchases()
        XCTAssertEqual(report.credited.map(\.transactionId), [id])
        let verifies = await s.api.verifyCount
        XCTAssertEqual(verifies, 3)
        await s.client.stop()
    }

    func testARetryableAnswerIsResubmittedWithBackoffAndFinishedOnce() async throws {
        let s = setup()
        let offers = try await s.client.packageOffers()
        await s.api.failVerify(
            Fixtures.problem(.paymentGrantFailed), Fixtures.problem(.serviceUnavailable, status: 503),
            CreditsError(.transport("offline")))
        let outcome = await s.client.purchase(try XCTUnwrap(offers.offer(productCode: "premium_pack")))
        guard case .awaitingCredit(let id, let error) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(id, nextId)
        XCTAssertEqual(error.problemCode, .paymentGrantFailed)
        XCTAssertEqual(s.store.finishCount(nextId), 0)
        let credited = await eventually { s.store.finishCount(id) == 1 }
        XCTAssertTrue(credited)
        let verifies = await s.api.verifyCount
        XCTAssertEqual(verifies, 4)
        let announced = await eventually { s.events.creditedIds == [id] }
        XCTAssertTrue(announced)
        let balanced = await eventually {
            s.events.events.contains(
                .balanceChanged(CreditBalance(balance: 415, lifetimeEarned: 415, lifetimeSpent: 0)))
        }
        XCTAssertTrue(balanced)
        let records = try await s.records.allRecords()
        XCTAssertTrue(records.isEmpty)
        let pending = await s.client.pendingPurchases()
        XCTAssertTrue(pending.isEmpty)
        await s.client.stop()
    }

    func testAFailedRecordWriteStillVerifies() async throws {
        let s = setup(failWrites: true)
        let offers = try await s.client.packageOffers()
        guard case .credited = await s.client.purchase(try XCTUnwrap(offers.offer(productCode: "starter_pack"))) else {
            return XCTFail()
        }
        XCTAssertEqual(s.store.finishCount(nextId), 1)
        await s.client.stop()
    }

    /// The user signed out while the sheet was up and then paid: the
    /// purchase is reported awaiting credit (kept unfinished for the next
    /// client), not as never started.
    func testAPurchasePaidAfterTheClientStoppedIsAwaitingCredit() async throws {
        let gated = GatedStoreFront(Fixtures.store(), afterPayment: true)
        let api = FakeCreditsAPI()
        let client = CreditsClient(
            api: api, storeFront: gated, records: InMemoryPurchaseRecordStore(), configuration: noRetries)
        let offers = try await client.packageOffers()
        let purchase = Task { await client.purchase(try XCTUnwrap(offers.offer(productCode: "premium_pack"))) }
        let sheetUp = await eventually { gated.sheetsWaiting == 1 }
        XCTAssertTrue(sheetUp)
        await client.stop()
        gated.release()
        let outcome = try await purchase.value
        guard case .awaitingCredit(let id, _) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(gated.inner.unfinishedIds, [id], "kept unfinished for the next client")
        XCTAssertEqual(outcome.advice, .retryLater)
        let verifies = await api.verifyCount
        XCTAssertEqual(verifies, 0)
    }

    /// The record could not be written (a full disk, a failed rename): the
    /// client does not forget it, it writes it again on its next pass, even
    /// while the purchase waits out its backoff.
    func testARecordThatCouldNotBeWrittenIsWrittenOnTheNextPass() async throws {
        let s = setup(configuration: noRetries, failWrites: true)
        let offers = try await s.client.packageOffers()
        await s.api.failVerify(CreditsError(.transport("offline")))
        guard
            case .awaitingCredit(let id, _) = await s.client.purchase(
                try XCTUnwrap(offers.offer(productCode: "premium_pack")))
        else {
            return XCTFail()
        }
        let none = try await s.records.allRecords()
        XCTAssertTrue(none.isEmpty)
        await s.records.setFailWrites(false)
        _ = await s.client.resumePendingPurchases()
        let written = try await s.records.allRecords()
        XCTAssertEqual(written.map(\.transactionId), [id])
        XCTAssertEqual(written.first?.submissionCount, 1)
        XCTAssertEqual(written.first?.lastFailure, "transport")
        await s.client.stop()
    }

    func testAStoppedClientDoesNothing() async throws {
        let s = setup()
        let offers = try await s.client.packageOffers()
        await s.client.stop()
        guard case .notStarted = await s.client.purchase(try XCTUnwrap(offers.offer(productCode: "starter_pack")))
        else { return XCTFail() }
        let report = await s.client.resumePendingPurchases()
        XCTAssertEqual(report, RecoveryReport())
        XCTAssertEqual(s.store.purchaseCount, 0)
    }
}

func XCTUnwrapAsync<T>(_ value: @autoclosure () async -> T?, file: StaticString = #filePath, line: UInt = #line)
    async throws -> T
{
    let unwrapped = await value()
    return try XCTUnwrap(unwrapped, file: file, line: line)
}
