import Foundation
import IAPCreditsClient
import IAPCreditsClientTestSupport
import XCTest

/// The client library driving the real gateway and services, with a fake
/// StoreKit that signs like Apple (local testing CA): a purchase, an app
/// killed between payment and verify, the gateway down during verify, a
/// refund afterwards. "Killed" is a client stopped and dropped; the
/// relaunch is a new client over the same record folder and StoreKit.
final class ClientAgainstGatewayTests: XCTestCase {
    var recordsFolder: URL!

    override func setUp() {
        recordsFolder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "client-records-\(UUID().uuidString)")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: recordsFolder)
    }

    private var fast: CreditsClientConfiguration {
        CreditsClientConfiguration(
            retrySchedule: RetrySchedule(
                initialDelayMilliseconds: 200, maximumDelayMilliseconds: 1_000, attemptsPerSessionMax: 60))
    }

    private func launch(_ api: any CreditsAPI, _ store: ScriptedStoreFront) throws -> CreditsClient {
        CreditsClient(
            api: api, storeFront: store, records: try FilePurchaseRecordStore(directory: recordsFolder),
            configuration: fast)
    }

    private func recordFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: recordsFolder.path)) ?? []).filter {
            $0.hasSuffix(".json")
        }
    }

    func testAPurchaseIsCreditedFinishedAndRefreshed() async throws {
        let system = try await LiveGateway.get()
        let user = system.user()
        let store = system.storeFront()
        let client = try launch(system.gatewayClient(for: user), store)
        _ = await client.start()

        let offers = try await client.packageOffers()
        XCTAssertEqual(
            offers.offers.map(\.productCode), ["new_user_pack", "starter_pack", "popular_pack", "premium_pack"])
        XCTAssertTrue(offers.isStarterPackEligible)
        XCTAssertEqual(offers.offer(productCode: "starter_pack")?.displayPrice, "$12.99", "StoreKit's price")

        store.script(.pending, .cancel)
        let pending = await client.purchase(try XCTUnwrap(offers.offer(productCode: "new_user_pack")))
        let cancelled = await client.purchase(try XCTUnwrap(offers.offer(productCode: "new_user_pack")))
        XCTAssertEqual([pending, cancelled], [.pending, .cancelled])

        let outcome = await client.purchase(try XCTUnwrap(offers.offer(productCode: "new_user_pack")))
        guard case .credited(let grant, let balance) = outcome else {
            return XCTFail("\(outcome)\n\(system.gatewayLogs.suffix(1500))")
        }
        XCTAssertEqual(grant.status, .granted)
        XCTAssertEqual(grant.creditsAdded, 60)
        XCTAssertEqual(balance?.balance, 60)
        let accountToken = try await client.accountToken()
        XCTAssertEqual(store.lastPurchaseAccountToken, accountToken)
        XCTAssertEqual(store.finishCount(grant.transactionId), 1)
        XCTAssertTrue(store.unfinishedIds.isEmpty)
        XCTAssertTrue(recordFiles().isEmpty)

        let ledger = try await system.ledger(user.id)
        XCTAssertEqual(
            ledger,
            [LedgerRow(eventId: "payment.apple_iap:\(grant.transactionId)", changeType: "purchase", signedAmount: 60)])
        let status = try await client.transactionStatus(transactionId: grant.transactionId)
        XCTAssertEqual(status.status, .granted)
        XCTAssertEqual(status.productCode, "new_user_pack")

        // The history routes show the purchase.
        let gateway = system.gatewayClient(for: user)
        let history = try await gateway.purchaseHistory()
        XCTAssertEqual(history.transactions.map(\.transactionId), [grant.transactionId])
        XCTAssertEqual(history.transactions.first?.status, .granted)
        XCTAssertNil(history.nextPageToken)
        let entries = try await gateway.ledger(pageSize: 1)
        XCTAssertEqual(entries.entries.map(\.signedAmount), [60])
        XCTAssertEqual(entries.entries.first?.changeType, "purchase")
        XCTAssertEqual(entries.entries.first?.transactionId, grant.transactionId)

        // Refreshed after the credit: the new user pack is gone.
        let after = try await client.packageOffers()
        XCTAssertFalse(after.isStarterPackEligible)
        XCTAssertNil(after.offer(productCode: "new_user_pack"))
        await client.stop()
    }

    func testAnAppKilledBetweenPaymentAndVerifyIsCreditedOnceAndFinishedOnceAfterRelaunch() async throws {
        let system = try await LiveGateway.get()
        let user = system.user()
        let store = system.storeFront()
        let dying = KillableAPI(real: system.gatewayClient(for: user), deathPoint: .beforeSending)
        let first = try launch(dying, store)
        let offers = try await first.packageOffers()
        let offer = try XCTUnwrap(offers.offer(productCode: "starter_pack"))
        let purchase = Task { await first.purchase(offer) }
        let died = try await system.eventually { dying.died }
        XCTAssertTrue(died)
        await first.stop()

        XCTAssertEqual(store.unfinishedIds.count, 1, "paid, unfinished")
        let transactionId = try XCTUnwrap(store.unfinishedIds.first)
        XCTAssertEqual(recordFiles(), ["\(transactionId).json"], "recorded before verify")
        let seenByBackend = try await system.paymentStatus(transactionId)
        XCTAssertNil(seenByBackend, "the verify never left the dead app")

        let relaunched = try launch(system.gatewayClient(for: user), store)
        let report = await relaunched.start()
        XCTAssertEqual(report.credited.map(\.transactionId), [transactionId], "\(report)")
        XCTAssertEqual(report.credited.first?.status, .granted)
        XCTAssertEqual(store.finishCount(transactionId), 1)
        XCTAssertTrue(recordFiles().isEmpty)
        let ledger = try await system.ledger(user.id)
        XCTAssertEqual(ledger.map(\.signedAmount), [100])

        // The dead client's frozen call returns now; stopped, it does nothing.
        dying.thaw()
        _ = await purchase.value
        let second = await relaunched.resumePendingPurchases()
        XCTAssertTrue(second.credited.isEmpty)
        XCTAssertEqual(store.finishCount(transactionId), 1)
        let ledgerAfter = try await system.ledger(user.id)
        XCTAssertEqual(ledgerAfter.count, 1)
        await relaunched.stop()
    }

    func testAnAppKilledAfterTheCreditButBeforeTheAnswerIsFinishedOnceAfterRelaunch() async throws {
        let system = try await LiveGateway.get()
        let user = system.user()
        let store = system.storeFront()
        let dying = KillableAPI(real: system.gatewayClient(for: user), deathPoint: .afterSending)
        let first = try launch(dying, store)
        let offers = try await first.packageOffers()
        let purchase = Task { await first.purchase(try! XCTUnwrap(offers.offer(productCode: "popular_pack"))) }
        let died = try await system.eventually { dying.died }
        XCTAssertTrue(died)
        await first.stop()
        let transactionId = try XCTUnwrap(store.unfinishedIds.first)
        let status = try await system.paymentStatus(transactionId)
        XCTAssertEqual(status, "granted", "credited, but the app never heard")

        let relaunched = try launch(system.gatewayClient(for: user), store)
        let report = await relaunched.start()
        XCTAssertEqual(report.credited.map(\.status), [.alreadyGranted], "\(report)")
        XCTAssertEqual(store.finishCount(transactionId), 1)
        let ledger = try await system.ledger(user.id)
        XCTAssertEqual(ledger.map(\.signedAmount), [210])
        dying.thaw()
        _ = await purchase.value
        await relaunched.stop()
    }

    func testTheGatewayDownDuringVerifyIsResubmittedAndCreditedOnce() async throws {
        let system = try await LiveGateway.get()
        let user = system.user()
        let store = system.storeFront()
        let client = try launch(system.gatewayClient(for: user), store)
        let events = EventLog(client)
        let offers = try await client.packageOffers()
        _ = try await client.accountToken()

        try await system.stopGateway()
        let outcome: PurchaseOutcome
        do {
            outcome = await client.purchase(try XCTUnwrap(offers.offer(productCode: "premium_pack")))
        }
        guard case .awaitingCredit(let transactionId, let error) = outcome else {
            try await system.restartGateway()
            return XCTFail("\(outcome)")
        }
        XCTAssertEqual(error.disposition, .keepAndRetry)
        XCTAssertEqual(error.advice, .retryLater)
        XCTAssertEqual(store.finishCount(transactionId), 0)
        XCTAssertEqual(store.unfinishedIds, [transactionId])
        XCTAssertEqual(recordFiles(), ["\(transactionId).json"])
        // At least one resubmission fails while the gateway is still down.
        let retriedWhileDown = try await system.eventually {
            events.pendingStates(transactionId).filter { if case .awaitingCredit = $0 { true } else { false } }.count
                >= 2
        }
        XCTAssertTrue(retriedWhileDown)

        try await system.restartGateway()
        let credited = try await system.eventually { store.finishCount(transactionId) == 1 }
        XCTAssertTrue(credited, system.gatewayLogs.suffix(1500).description)
        let announced = try await system.eventually { events.creditedIds == [transactionId] }
        XCTAssertTrue(announced)
        let ledger = try await system.ledger(user.id)
        XCTAssertEqual(
            ledger,
            [LedgerRow(eventId: "payment.apple_iap:\(transactionId)", changeType: "purchase", signedAmount: 415)])
        let refreshed = try await system.eventually { events.balances.last == 415 }
        XCTAssertTrue(refreshed)
        XCTAssertTrue(recordFiles().isEmpty)
        await client.stop()
    }

    func testARefundNotificationAfterThePurchaseTakesTheCreditsBack() async throws {
        let system = try await LiveGateway.get()
        let user = system.user()
        let store = system.storeFront()
        let client = try launch(system.gatewayClient(for: user), store)
        let events = EventLog(client)
        _ = await client.start()
        let offers = try await client.packageOffers()
        guard
            case .credited(let grant, _) = await client.purchase(
                try XCTUnwrap(offers.offer(productCode: "starter_pack")))
        else {
            return XCTFail("not credited")
        }
        let token = try await client.accountToken()

        // Apple tells the backend, then StoreKit tells the app.
        let answered = try await system.notifyRefund(
            transactionId: grant.transactionId, productID: "com.meeyao.qianwen.starter_pack",
            appAccountToken: token)
        XCTAssertEqual(answered, 200)
        let clawedBack = try await system.eventually { try await system.balance(user.id) == 0 }
        XCTAssertTrue(clawedBack)
        try store.refund(grant.transactionId)

        let revoked = try await system.eventually { events.revokedIds == [grant.transactionId] }
        XCTAssertTrue(revoked, "\(events.all)")
        let zero = try await system.eventually { events.balances.last == 0 }
        XCTAssertTrue(zero)
        XCTAssertTrue(store.unfinishedIds.isEmpty, "the refund StoreKit delivered is finished too")
        XCTAssertEqual(store.finishCount(grant.transactionId), 2, "the purchase, then the refund's delivery")
        let ledger = try await system.ledger(user.id)
        XCTAssertEqual(
            ledger,
            [
                LedgerRow(
                    eventId: "payment.apple_iap:\(grant.transactionId)", changeType: "purchase", signedAmount: 100),
                LedgerRow(eventId: "refund.apple_iap:\(grant.transactionId)", changeType: "refund", signedAmount: -100),
            ])
        let status = try await system.paymentStatus(grant.transactionId)
        XCTAssertEqual(status, "refunded")
        await client.stop()
    }

    /// A purchase made on this device by another account stays that
    /// account's: never submitted for the signed-in user, credited to its
    /// owner once the owner is back.
    func testAnotherAccountsUnfinishedPurchaseWaitsForItsOwner() async throws {
        let system = try await LiveGateway.get()
        let owner = system.user()
        let other = system.user()
        let store = system.storeFront()
        let dying = KillableAPI(real: system.gatewayClient(for: owner), deathPoint: .beforeSending)
        let ownersClient = try launch(dying, store)
        let offers = try await ownersClient.packageOffers()
        let purchase = Task { await ownersClient.purchase(try! XCTUnwrap(offers.offer(productCode: "starter_pack"))) }
        let died = try await system.eventually { dying.died }
        XCTAssertTrue(died)
        await ownersClient.stop()
        let transactionId = try XCTUnwrap(store.unfinishedIds.first)

        let othersClient = try launch(system.gatewayClient(for: other), store)
        let report = await othersClient.start()
        XCTAssertEqual(report.pending.map(\.state), [.otherAccount])
        let seen = try await system.paymentStatus(transactionId)
        XCTAssertNil(seen)
        await othersClient.stop()

        let ownerAgain = try launch(system.gatewayClient(for: owner), store)
        let credited = await ownerAgain.start()
        XCTAssertEqual(credited.credited.map(\.transactionId), [transactionId])
        let ownerLedger = try await system.ledger(owner.id)
        let otherLedger = try await system.ledger(other.id)
        XCTAssertEqual(ownerLedger.map(\.signedAmount), [100])
        XCTAssertTrue(otherLedger.isEmpty)
        dying.thaw()
        _ = await purchase.value
        await ownerAgain.stop()
    }

    /// The library's requests carry tokens and signed transactions; no
    /// service writes them to its log.
    func testNothingTheLibrarySentReachesALog() async throws {
        let system = try await LiveGateway.get()
        let user = system.user()
        let store = system.storeFront()
        let client = try launch(system.gatewayClient(for: user), store)
        let offers = try await client.packageOffers()
        guard case .credited = await client.purchase(try XCTUnwrap(offers.offer(productCode: "starter_pack"))) else {
            return XCTFail()
        }
        await client.stop()
        let logs = system.allLogs
        XCTAssertFalse(logs.isEmpty)
        XCTAssertGreaterThan(system.secrets.count, 3)
        for secret in system.secrets {
            // An email whole; a JWS or token by its signature, unique to it.
            let needle = secret.contains("@") ? secret : String(secret.split(separator: ".").last ?? Substring(secret))
            XCTAssertGreaterThan(needle.count, 20)
            XCTAssertFalse(logs.contains(needle), "a secret reached a log")
        }
    }
}

/// A client's events, collected.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [CreditsEvent] = []
    private var task: Task<Void, Never>?

    init(_ client: CreditsClient) {
        let stream = client.events
        task = Task { [weak self] in
            for await event in stream { self?.append(event) }
        }
    }

    deinit { task?.cancel() }

    private func append(_ event: CreditsEvent) { lock.withLock { events.append(event) } }
    var all: [CreditsEvent] { lock.withLock { events } }

    var creditedIds: [String] {
        all.compactMap { if case .credited(let grant) = $0 { grant.transactionId } else { nil } }
    }
    var revokedIds: [String] { all.compactMap { if case .revoked(let id) = $0 { id } else { nil } } }
    var balances: [Int64] {
        all.compactMap { if case .balanceChanged(let balance) = $0 { balance.balance } else { nil } }
    }

    func pendingStates(_ transactionId: String) -> [PendingPurchaseSummary.State] {
        all.compactMap { event in
            guard case .pendingPurchaseChanged(let summary) = event, summary.transactionId == transactionId else {
                return nil
            }
            return summary.state
        }
    }
}
