import Contracts
import Foundation
import PostgresClient
import TestSupport
import XCTest

/// The notification recovery job against the App Store stand-in through the
/// real services: notifications that never reached us (an outage) are read
/// from Get Notification History and credited or clawed back exactly once,
/// across pages, resuming where the job stopped, obeying rate limits.
final class PaymentsNotificationRecoveryTests: XCTestCase {
    nonisolated(unsafe) static var fixture: AppStoreSyncFixture?
    /// The first history request of each environment, seen at start-up
    /// (before any test resets the stand-in's request log).
    nonisolated(unsafe) static var firstRequests: [String: [String: Any]] = [:]
    static let overlapSeconds: Int64 = 600

    override class func tearDown() {
        let done = DispatchSemaphore(value: 0)
        Task {
            await fixture?.shutdown()
            done.signal()
        }
        _ = done.wait(timeout: .now() + 60)
        fixture = nil
        super.tearDown()
    }

    private func fixture() async throws -> AppStoreSyncFixture {
        if let fixture = Self.fixture { return fixture }
        let started = try await AppStoreSyncFixture.start(jobs: [
            "NOTIFICATION_RECOVERY_INTERVAL_SECONDS": "1",
            "NOTIFICATION_RECOVERY_OVERLAP_SECONDS": "\(Self.overlapSeconds)",
        ])
        Self.fixture = started
        for environment in ["Production", "Sandbox"] {
            let asked = try await started.cluster.eventually {
                try await !self.historyRequests(started, environment: environment).isEmpty
            }
            XCTAssertTrue(asked, "the \(environment) job ran at start-up")
            Self.firstRequests[environment] = try await historyRequests(started, environment: environment).first
        }
        return started
    }

    /// The job's row: resume point, schedule, last outcome.
    private func jobRow(_ cluster: PaymentsCluster, _ job: String) async throws -> (
        resume: Int64?, nextRunInMs: Int64, outcome: String?
    )? {
        try await cluster.paymentsDatabase.withConnection { connection in
            guard
                let row = try await connection.query(
                    """
                    select resume_ms, (extract(epoch from (next_run_at - now())) * 1000)::bigint as next_ms, last_outcome
                    from apple_sync_jobs where job = $1
                    """, [.text(job)]
                ).first
            else { return nil }
            return (
                try row.optionalInt64("resume_ms"), try row.int64("next_ms"), try row.optionalString("last_outcome")
            )
        }
    }

    private func historyRequests(_ fixture: AppStoreSyncFixture, environment: String = "Production") async throws
        -> [[String: Any]]
    {
        try await fixture.requests("/inApps/v1/notifications/history", environment: environment)
    }

    func testNotificationsLostDuringAnOutageAreCreditedAndClawedBackOnce() async throws {
        let fixture = try await fixture()
        let cluster = fixture.cluster
        let user = UUID()
        let token = try await cluster.accountToken(user)
        // Before the outage: the app bought and verified the premium pack.
        let refunded = PaymentsCluster.randomTransactionId()
        let signed = try cluster.signedTransaction(
            refunded, productCode: "premium_pack", appAccountToken: token, environment: "Production")
        _ = try await cluster.verify(
            try cluster.verifyRequest(
                user: user, productCode: "premium_pack", transactionId: refunded, signed: signed,
                appAccountToken: token))
        // During the outage: a purchase the app never submitted (ONE_TIME_CHARGE)
        // and a refund of the premium pack (REFUND); neither was delivered.
        let bought = PaymentsCluster.randomTransactionId()
        let customer = "c-\(user)"
        try await fixture.standIn.add(
            environment: "Production",
            transactions: [
                AppStoreSyncFixture.transaction(bought, productCode: "popular_pack", token: token, customer: customer),
                AppStoreSyncFixture.transaction(
                    refunded, productCode: "premium_pack", token: token, customer: customer, revoked: true),
            ])
        let uuids = try await fixture.standIn.add(
            environment: "Production",
            notifications: [
                AppStoreSyncFixture.notification("ONE_TIME_CHARGE", about: bought),
                AppStoreSyncFixture.notification("REFUND", about: refunded),
            ])
        let credited = try await cluster.waitSettled(bought, status: "granted")
        let clawedBack = try await cluster.waitSettled(refunded, status: "refunded")
        XCTAssertTrue(credited)
        XCTAssertTrue(clawedBack)
        for uuid in uuids {
            let outcome = try await cluster.paymentsDatabase.withConnection {
                try await $0.query(
                    "select outcome from apple_notifications where notification_uuid = $1::uuid",
                    [.uuid(UUID(uuidString: uuid)!)]
                )
                .first?.string("outcome")
            }
            XCTAssertNotNil(outcome, "recorded through the notification path")
        }
        // Later runs read the same window again (the overlap): nothing changes.
        let seen = try await historyRequests(fixture).count
        let moreRuns = try await cluster.eventually(timeout: .seconds(20)) {
            try await self.historyRequests(fixture).count >= seen + 2
        }
        XCTAssertTrue(moreRuns)
        try await cluster.assertGrantedOnce(bought, user: user, productCode: "popular_pack")
        let purchases = try await cluster.purchaseRows(refunded)
        let refunds = try await cluster.refundRows(refunded)
        XCTAssertEqual(purchases, 1)
        XCTAssertEqual(refunds, 1)
        let balance = try await cluster.balance(user)
        XCTAssertEqual(balance.balance, 210)
        try await cluster.assertPointsInvariants(users: [user])
        fixture.assertNoSecrets(in: cluster.paymentsLogs)
    }

    func testTheJobResumesFromItsStoredPointAfterARestart() async throws {
        let fixture = try await fixture()
        let cluster = fixture.cluster
        let job = "notification_recovery:Production"
        let stored = try await cluster.eventually { (try await self.jobRow(cluster, job)?.resume) != nil }
        XCTAssertTrue(stored)
        // The very first run asked for the failures of the whole reach (180
        // days in production, 30 in sandbox).
        let now = AppStoreSyncFixture.nowMilliseconds
        let firstBody = Self.firstRequests["Production"]?["body"] as? [String: Any]
        XCTAssertEqual(firstBody?["onlyFailures"] as? Bool, true)
        XCTAssertLessThan(firstBody?["startDate"] as? Int64 ?? .max, now - 179 * 86_400_000)
        let sandboxFirst = Self.firstRequests["Sandbox"]?["body"] as? [String: Any]
        XCTAssertEqual(sandboxFirst?["onlyFailures"] as? Bool, true)
        XCTAssertGreaterThan(sandboxFirst?["startDate"] as? Int64 ?? 0, now - 30 * 86_400_000, "sandbox keeps 30 days")
        XCTAssertLessThan(sandboxFirst?["startDate"] as? Int64 ?? .max, now - 29 * 86_400_000)

        // Crash; a purchase is made and its notification sent while the service is down.
        let user = UUID()
        let token = try await cluster.accountToken(user)
        try await cluster.killPayments()
        let resume = try await jobRow(cluster, job)?.resume ?? 0
        let askedBeforeRestart = try await historyRequests(fixture).count
        let bought = PaymentsCluster.randomTransactionId()
        try await fixture.standIn.add(
            environment: "Production",
            transactions: [
                AppStoreSyncFixture.transaction(
                    bought, productCode: "starter_pack", token: token, customer: "c-\(user)")
            ], notifications: [AppStoreSyncFixture.notification("ONE_TIME_CHARGE", about: bought)])
        try await Task.sleep(for: .milliseconds(200))
        try await cluster.startPayments()
        let credited = try await cluster.waitSettled(bought, status: "granted")
        XCTAssertTrue(credited)
        try await cluster.assertGrantedOnce(bought, user: user, productCode: "starter_pack")
        // After the restart the job did not start over: its windows begin at
        // the stored point minus the overlap, never a bootstrap again.
        let later = try await historyRequests(fixture).dropFirst(askedBeforeRestart).compactMap {
            $0["body"] as? [String: Any]
        }
        XCTAssertEqual(
            later.first?["startDate"] as? Int64, resume - Self.overlapSeconds * 1000,
            "the first window after the restart starts at the stored point minus the overlap")
        XCTAssertTrue(later.allSatisfy { $0["onlyFailures"] == nil }, "no bootstrap again")
        try await cluster.assertPointsInvariants(users: [user])
    }

    /// A window left waiting longer than the margin (e.g. Apple's key was
    /// wrong for days after the first deploy) starts before what Apple keeps;
    /// Apple refuses it (4000012) on every run. Its start moves into reach,
    /// so recovery goes on: a notification lost meanwhile is still credited.
    func testAWindowThatFellOutOfApplesReachIsMovedIntoIt() async throws {
        let fixture = try await fixture()
        let cluster = fixture.cluster
        let now = AppStoreSyncFixture.nowMilliseconds
        let day: Int64 = 86_400_000
        let before = try await historyRequests(fixture).count
        // Between two runs (no lease held), the window becomes a stale one.
        let stale = try await cluster.eventually {
            try await cluster.paymentsDatabase.withConnection { connection in
                try await connection.query(
                    """
                    update apple_sync_jobs set window_start_ms = $1::bigint, window_end_ms = $2::bigint, window_only_failures = true,
                        page_token = null, next_run_at = now()
                    where job = 'notification_recovery:Production' and (lease_until is null or lease_until < now())
                    returning job
                    """, [.int64(now - 200 * day), .int64(now - 190 * day)]
                ).count == 1
            }
        }
        XCTAssertTrue(stale)
        let user = UUID()
        let token = try await cluster.accountToken(user)
        let bought = PaymentsCluster.randomTransactionId()
        try await fixture.standIn.add(
            environment: "Production",
            transactions: [
                AppStoreSyncFixture.transaction(
                    bought, productCode: "starter_pack", token: token, customer: "c-\(user)")
            ], notifications: [AppStoreSyncFixture.notification("ONE_TIME_CHARGE", about: bought)])
        let credited = try await cluster.waitSettled(bought, status: "granted")
        XCTAssertTrue(credited, "recovery went on past the stale window")
        try await cluster.assertGrantedOnce(bought, user: user, productCode: "starter_pack")
        let asked = try await historyRequests(fixture).dropFirst(before)
        XCTAssertFalse(asked.contains { $0["status"] as? Int == 400 }, "no window Apple refuses was asked for")
        XCTAssertTrue(
            asked.compactMap { ($0["body"] as? [String: Any])?["startDate"] as? Int64 }.allSatisfy {
                $0 > now - 180 * day
            })
        XCTAssertTrue(cluster.paymentsLogs.contains("\"alert\":\"notification_history_gap\""))
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testPagesAreWalkedToTheEnd() async throws {
        let fixture = try await fixture()
        let cluster = fixture.cluster
        let user = UUID()
        let token = try await cluster.accountToken(user)
        let ids = (0..<45).map { _ in PaymentsCluster.randomTransactionId() }
        try await fixture.standIn.add(
            environment: "Production",
            transactions: ids.map {
                AppStoreSyncFixture.transaction($0, productCode: "starter_pack", token: token, customer: "c-\(user)")
            }, notifications: ids.map { AppStoreSyncFixture.notification("ONE_TIME_CHARGE", about: $0) })
        let all = try await cluster.eventually(timeout: .seconds(40)) {
            try await cluster.balance(user).balance == 4_500
        }
        XCTAssertTrue(all, "45 purchases of 100 credits")
        let paged = try await historyRequests(fixture).filter {
            ($0["query"] as? String ?? "").contains("paginationToken=")
        }
        XCTAssertGreaterThanOrEqual(paged.count, 2, "45 notifications are 3 pages of 20")
        for id in ids { try await cluster.assertGrantedOnce(id, user: user, productCode: "starter_pack") }
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testRateLimitsAndRetryAfterAreObeyed() async throws {
        let fixture = try await fixture()
        let cluster = fixture.cluster
        let path = "/inApps/v1/notifications/history"
        // A short Retry-After: the client waits that long, then the run goes on.
        let before = try await historyRequests(fixture).count
        try await fixture.standIn.fault(
            ["kind": "rate_limit", "retryAfter": 1], match: path, environment: "Production")
        let retried = try await cluster.eventually {
            let requests = try await self.historyRequests(fixture).dropFirst(before)
            return requests.contains { $0["status"] as? Int == 429 } && requests.last?["status"] as? Int == 200
        }
        XCTAssertTrue(retried)
        let requests = Array(try await historyRequests(fixture).dropFirst(before))
        let limited = try XCTUnwrap(requests.firstIndex { $0["status"] as? Int == 429 })
        let next = try XCTUnwrap(requests.dropFirst(limited + 1).first)
        let waited = (next["at"] as? Double ?? 0) - (requests[limited]["at"] as? Double ?? 0)
        XCTAssertGreaterThanOrEqual(waited, 0.95, "Retry-After: 1 obeyed")

        // A Retry-After longer than the client waits in a call: the job stops
        // and does not ask again before it (the interval is 1 s).
        try await fixture.standIn.fault(
            ["kind": "rate_limit", "retryAfter": 120], match: path, environment: "Production", count: 10)
        let deferred = try await cluster.eventually {
            try await self.jobRow(cluster, "notification_recovery:Production")?.outcome == "rate_limited"
        }
        XCTAssertTrue(deferred)
        let row = try await jobRow(cluster, "notification_recovery:Production")
        XCTAssertGreaterThan(row?.nextRunInMs ?? 0, 100_000, "next run after Apple's 120 s")
        let asked = try await historyRequests(fixture).count
        try await Task.sleep(for: .seconds(3))
        let askedLater = try await historyRequests(fixture).count
        XCTAssertEqual(askedLater, asked, "no call to Apple while it asked us to wait")
        // Apple's form (a time, in milliseconds): the wait logged is what was
        // left of the 120 s when the answer was read.
        let logged = cluster.paymentsLogs.split(separator: "\n").compactMap { line -> Int? in
            guard let range = line.range(of: "\"retry_after_ms\":\"") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        XCTAssertTrue(logged.contains { (110_000...120_000).contains($0) }, "\(logged)")
        fixture.assertNoSecrets(in: cluster.paymentsLogs)
        // Let the other tests go on: clear the faults and make the job due again.
        try await fixture.standIn.command(["op": "reset"])
        try await cluster.paymentsDatabase.withConnection {
            _ = try await $0.query(
                "update apple_sync_jobs set next_run_at = now() where job = 'notification_recovery:Production'")
        }
    }
}
