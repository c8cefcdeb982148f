import Contracts
import Foundation
import PostgresClient
import XCTest

/// Apple's CONSUMPTION_REQUEST through the real services against the App
/// Store stand-in: with the user's consent and the operator's setting, one
/// Send Consumption Information (v2) with the share of the purchase's
/// credits already spent; nothing without consent or when disabled; a
/// redelivery sends nothing twice; a transient failure is retried once.
final class PaymentsConsumptionTests: XCTestCase {
    nonisolated(unsafe) static var fixtures: [Bool: AppStoreSyncFixture] = [:]

    override class func tearDown() {
        let done = DispatchSemaphore(value: 0)
        Task {
            for fixture in fixtures.values { await fixture.shutdown() }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 60)
        fixtures = [:]
        super.tearDown()
    }

    /// A fixture whose PaymentsService answers (`enabled`) or not.
    private func fixture(enabled: Bool = true) async throws -> AppStoreSyncFixture {
        if let fixture = Self.fixtures[enabled] { return fixture }
        let started = try await AppStoreSyncFixture.start(jobs: [
            "CONSUMPTION_ANSWERS": enabled ? "on" : "off", "CONSUMPTION_REFUND_PREFERENCE": "GRANT_PRORATED",
            "CONSUMPTION_RETRY_SECONDS": "1",
        ])
        Self.fixtures[enabled] = started
        return started
    }

    /// A popular_pack (210 credits) bought with the user's token and
    /// credited through ONE_TIME_CHARGE, known to the stand-in too.
    private func buy(_ fixture: AppStoreSyncFixture, user: UUID) async throws -> (transactionId: String, token: String)
    {
        let cluster = fixture.cluster
        let token = try await cluster.accountToken(user)
        let transactionId = PaymentsCluster.randomTransactionId()
        try await fixture.standIn.add(
            environment: "Production",
            transactions: [
                AppStoreSyncFixture.transaction(
                    transactionId, productCode: "popular_pack", token: token, customer: "c-\(user)")
            ])
        _ = try await cluster.notify(
            try cluster.signedOneTimeCharge(
                transactionId, productCode: "popular_pack", appAccountToken: token,
                environment: "Production"))
        let settled = try await cluster.waitSettled(transactionId, status: "granted")
        XCTAssertTrue(settled)
        return (transactionId, token)
    }

    private func consent(_ cluster: PaymentsCluster, _ user: UUID, _ consented: Bool) async throws
        -> ConsumptionConsentResponse
    {
        var request = SetConsumptionConsentRequest()
        request.userId = user.uuidString.lowercased()
        request.consented = consented
        return try await cluster.rpc().call(PaymentsMethods.setConsumptionConsent, request, timeout: .seconds(10))
    }

    private func consumptionRequest(_ cluster: PaymentsCluster, _ transactionId: String, token: String, uuid: UUID)
        throws -> String
    {
        try cluster.signedNotification(
            "CONSUMPTION_REQUEST", uuid: uuid,
            signedTransactionInfo: cluster.signedTransaction(
                transactionId, productCode: "popular_pack", appAccountToken: token, environment: "Production"),
            environment: "Production")
    }

    /// The bodies the stand-in accepted for `transactionId`.
    private func sent(_ fixture: AppStoreSyncFixture, _ transactionId: String) async throws -> [[String: Any]] {
        let answer = try await fixture.standIn.command(["op": "consumption", "env": "Production"])
        let all = answer["consumption"] as? [[String: Any]] ?? []
        return all.filter { $0["transactionId"] as? String == transactionId }.compactMap {
            $0["body"] as? [String: Any]
        }
    }

    private func answerRow(_ cluster: PaymentsCluster, _ uuid: UUID) async throws -> (
        status: String, attempts: Int64, body: String?
    )? {
        try await cluster.paymentsDatabase.withConnection {
            guard
                let row = try await $0.query(
                    "select status, attempts, body::text as body from consumption_answers where notification_uuid = $1::uuid",
                    [.uuid(uuid)]
                ).first
            else { return nil }
            return (try row.string("status"), try row.int64("attempts"), try row.optionalString("body"))
        }
    }

    private func waitForStatus(_ cluster: PaymentsCluster, _ uuid: UUID, _ status: String) async throws -> Bool {
        try await cluster.eventually { try await self.answerRow(cluster, uuid)?.status == status }
    }

    /// A purchase first heard of through its CONSUMPTION_REQUEST (its
    /// ONE_TIME_CHARGE lost, the app never submitted it): its signed
    /// transaction claims it through our appAccountToken and credits it
    /// once, and the answer tells Apple it was delivered (it was recorded
    /// only, and answered as if no one had consented).
    func testAConsumptionRequestForAPurchaseNeverSeenCreditsItAndAnswersDelivered() async throws {
        let fixture = try await fixture()
        let cluster = fixture.cluster
        let user = UUID()
        _ = try await consent(cluster, user, true)
        let token = try await cluster.accountToken(user)
        let transactionId = PaymentsCluster.randomTransactionId()
        try await fixture.standIn.add(
            environment: "Production",
            transactions: [
                AppStoreSyncFixture.transaction(
                    transactionId, productCode: "popular_pack", token: token, customer: "c-\(user)")
            ])
        let uuid = UUID()
        let answer = try await cluster.notify(try consumptionRequest(cluster, transactionId, token: token, uuid: uuid))
        XCTAssertEqual(answer.outcome, "consumption_requested")
        let settled = try await cluster.waitSettled(transactionId, status: "granted")
        XCTAssertTrue(settled)
        try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "popular_pack")
        let sentOnce = try await waitForStatus(cluster, uuid, "sent")
        XCTAssertTrue(sentOnce)
        let bodies = try await sent(fixture, transactionId)
        let body = try XCTUnwrap(bodies.first)
        XCTAssertEqual(body["deliveryStatus"] as? String, "DELIVERED")
        XCTAssertEqual(body["consumptionPercentage"] as? Int, 0)
        // A redelivery changes nothing.
        let again = try await cluster.notify(try consumptionRequest(cluster, transactionId, token: token, uuid: uuid))
        XCTAssertTrue(again.duplicate)
        try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "popular_pack")
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testWithConsentOneAnswerCarriesTheShareSpentAndARedeliverySendsNothing() async throws {
        let fixture = try await fixture()
        let cluster = fixture.cluster
        let user = UUID()
        let stored = try await consent(cluster, user, true)
        XCTAssertTrue(stored.consented && stored.recorded)
        let purchase = try await buy(fixture, user: user)
        try await cluster.spend(user, amount: 63)  // 30 % of 210

        let uuid = UUID()
        let notification = try consumptionRequest(cluster, purchase.transactionId, token: purchase.token, uuid: uuid)
        let answer = try await cluster.notify(notification)
        XCTAssertEqual(answer.outcome, "consumption_requested")
        let sentOnce = try await waitForStatus(cluster, uuid, "sent")
        XCTAssertTrue(sentOnce)
        var bodies = try await sent(fixture, purchase.transactionId)
        XCTAssertEqual(bodies.count, 1)
        let body = try XCTUnwrap(bodies.first)
        XCTAssertEqual(body["customerConsented"] as? Bool, true)
        XCTAssertEqual(body["deliveryStatus"] as? String, "DELIVERED")
        XCTAssertEqual(body["sampleContentProvided"] as? Bool, false)
        XCTAssertEqual(body["consumptionPercentage"] as? Int, 30_000)
        XCTAssertEqual(body["refundPreference"] as? String, "GRANT_PRORATED")
        let row = try await answerRow(cluster, uuid)
        XCTAssertEqual(row?.attempts, 1)
        XCTAssertTrue(row?.body?.contains("30000") ?? false, "the body sent is recorded")

        // Apple redelivers the notification: nothing is sent again.
        let again = try await cluster.notify(notification)
        XCTAssertTrue(again.duplicate)
        try await Task.sleep(for: .seconds(6))  // longer than one pass of the answerer's loop
        bodies = try await sent(fixture, purchase.transactionId)
        XCTAssertEqual(bodies.count, 1)
        let puts = try await fixture.requests("/inApps/v2/transactions/consumption/\(purchase.transactionId)")
        XCTAssertEqual(puts.count, 1)
        XCTAssertTrue(puts.allSatisfy { $0["method"] as? String == "PUT" && $0["jwtValid"] as? Bool == true })
        fixture.assertNoSecrets(in: cluster.paymentsLogs)
    }

    func testWithoutConsentNothingIsSent() async throws {
        let fixture = try await fixture()
        let cluster = fixture.cluster
        let withdrawn = UUID()
        _ = try await consent(cluster, withdrawn, true)
        _ = try await consent(cluster, withdrawn, false)
        let silent = UUID()  // never said
        for user in [withdrawn, silent] {
            let purchase = try await buy(fixture, user: user)
            let uuid = UUID()
            _ = try await cluster.notify(
                try consumptionRequest(cluster, purchase.transactionId, token: purchase.token, uuid: uuid))
            let skipped = try await waitForStatus(cluster, uuid, "skipped")
            XCTAssertTrue(skipped)
            let bodies = try await sent(fixture, purchase.transactionId)
            XCTAssertEqual(bodies.count, 0)
        }
        var get = GetConsumptionConsentRequest()
        get.userId = silent.uuidString.lowercased()
        let never = try await cluster.rpc().call(PaymentsMethods.getConsumptionConsent, get, timeout: .seconds(10))
        XCTAssertFalse(never.consented || never.recorded)
        get.userId = withdrawn.uuidString.lowercased()
        let no = try await cluster.rpc().call(PaymentsMethods.getConsumptionConsent, get, timeout: .seconds(10))
        XCTAssertTrue(no.recorded)
        XCTAssertFalse(no.consented)
    }

    /// A consenting user's purchase whose consumption answer meets `count`
    /// faults of Apple's first: whether the answer was sent within 40 s.
    private func answerAfterFaults(_ fault: [String: Any], count: Int) async throws
        -> (fixture: AppStoreSyncFixture, transactionId: String, path: String, uuid: UUID, sent: Bool)
    {
        let fixture = try await fixture()
        let cluster = fixture.cluster
        let user = UUID()
        _ = try await consent(cluster, user, true)
        let purchase = try await buy(fixture, user: user)
        let path = "/inApps/v2/transactions/consumption/\(purchase.transactionId)"
        try await fixture.standIn.fault(fault, match: path, environment: "Production", count: count)
        let uuid = UUID()
        _ = try await cluster.notify(
            try consumptionRequest(cluster, purchase.transactionId, token: purchase.token, uuid: uuid))
        let sent = try await cluster.eventually(timeout: .seconds(40)) {
            try await self.answerRow(cluster, uuid)?.status == "sent"
        }
        return (fixture, purchase.transactionId, path, uuid, sent)
    }

    func testATransientFailureIsRetriedAndSentOnce() async throws {
        // More failures than the client's own attempts (4): the first answer fails.
        let answer = try await answerAfterFaults(["kind": "status", "status": 503], count: 5)
        XCTAssertTrue(answer.sent)
        let row = try await answerRow(answer.fixture.cluster, answer.uuid)
        XCTAssertGreaterThanOrEqual(row?.attempts ?? 0, 2, "the answer was tried again")
        let bodies = try await sent(answer.fixture, answer.transactionId)
        XCTAssertEqual(bodies.count, 1)
        XCTAssertEqual(bodies.first?["consumptionPercentage"] as? Int, 0, "nothing spent")
        let puts = try await answer.fixture.requests(answer.path)
        XCTAssertGreaterThan(puts.count, 5 - 1, "the failures were answered first")
    }

    /// A refusal of our key (401) is ours to fix within the 12 h window:
    /// the answer stays due and goes out once Apple takes the key. It was
    /// marked failed for good.
    func testAnAnswerRefusedForOurKeyIsSentOnceTheKeyWorks() async throws {
        let answer = try await answerAfterFaults(["kind": "status", "status": 401, "errorCode": 4010000], count: 1)
        XCTAssertTrue(answer.sent, "still due after the 401, sent once the key works")
        let bodies = try await sent(answer.fixture, answer.transactionId)
        XCTAssertEqual(bodies.count, 1)
    }

    func testDisabledNothingIsSentEvenWithConsent() async throws {
        let fixture = try await fixture(enabled: false)
        let cluster = fixture.cluster
        let user = UUID()
        _ = try await consent(cluster, user, true)
        let purchase = try await buy(fixture, user: user)
        let uuid = UUID()
        _ = try await cluster.notify(
            try consumptionRequest(cluster, purchase.transactionId, token: purchase.token, uuid: uuid))
        let skipped = try await waitForStatus(cluster, uuid, "skipped")
        XCTAssertTrue(skipped)
        let puts = try await fixture.requests("/inApps/v2/transactions/consumption/")
        XCTAssertEqual(puts.count, 0)
    }
}
