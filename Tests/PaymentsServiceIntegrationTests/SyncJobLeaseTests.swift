import Foundation
import Locking
import Logging
@testable import PaymentsService
import PostgresClient
import XCTest

/// Leader election of the jobs that ask Apple, on the real database: one
/// holder at a time, only when due, a dead holder's lease expires, a stalled
/// holder's writes are fenced, resume points never move back; and the
/// sweeps' row selection.
final class SyncJobLeaseTests: XCTestCase {
    private func job() -> String { "test_job:\(UUID().uuidString.prefix(8))" }

    func testOneHolderAtATimeAndOnlyWhenDue() async throws {
        let store = try await PaymentsTestDatabase.store()
        let job = job()
        let first = try await store.acquireSyncJob(job, owner: "a", lease: .seconds(30))
        XCTAssertNotNil(first, "a new job is due at once")
        XCTAssertNil(first?.resumeMilliseconds)
        let rival = try await store.acquireSyncJob(job, owner: "b", lease: .seconds(30))
        XCTAssertNil(rival, "held by a")
        let again = try await store.acquireSyncJob(job, owner: "a", lease: .seconds(30))
        XCTAssertNil(again, "not even by its holder twice")
        let future = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
        let finished = try await store.finishSyncJob(
            job, owner: "a", nextRunAtMilliseconds: future, outcome: "completed")
        XCTAssertTrue(finished)
        let early = try await store.acquireSyncJob(job, owner: "b", lease: .seconds(30))
        XCTAssertNil(early, "released, but not due for a minute")
        let dueIn = try await store.syncJobDueIn(job)
        XCTAssertGreaterThan(dueIn, .seconds(50))
    }

    func testParallelInstancesElectOneHolder() async throws {
        let store = try await PaymentsTestDatabase.store()
        let job = job()
        let winners = try await withThrowingTaskGroup(of: String?.self) { group in
            for index in 0..<16 {
                group.addTask {
                    try await store.acquireSyncJob(job, owner: "instance-\(index)", lease: .seconds(30)) != nil
                        ? "instance-\(index)" : nil
                }
            }
            return try await group.reduce(into: [String]()) { if let winner = $1 { $0.append(winner) } }
        }
        XCTAssertEqual(winners.count, 1, "\(winners)")
    }

    func testADeadHoldersLeaseExpiresAndItsLateWritesAreFenced() async throws {
        let store = try await PaymentsTestDatabase.store()
        let job = job()
        _ = try await store.acquireSyncJob(job, owner: "crashed", lease: .milliseconds(200))
        try await Task.sleep(for: .milliseconds(400))
        let takeover = try await store.acquireSyncJob(job, owner: "b", lease: .seconds(30))
        XCTAssertNotNil(takeover, "the lease expired: another instance runs the job")
        // The old holder wakes up: none of its writes land.
        let window = NotificationRecoveryWindow(startMilliseconds: 1, endMilliseconds: 2, onlyFailures: false)
        let saved = try await store.saveSyncWindow(
            job, owner: "crashed", window: window, pageToken: "t", lease: .seconds(30))
        XCTAssertFalse(saved)
        let completed = try await store.completeSyncWindow(job, owner: "crashed", resumeMilliseconds: 99)
        XCTAssertFalse(completed)
        let finished = try await store.finishSyncJob(
            job, owner: "crashed", nextRunAtMilliseconds: 0, outcome: "completed")
        XCTAssertFalse(finished)
        let renewed = try await store.renewSyncJob(job, owner: "b", lease: .seconds(30))
        XCTAssertTrue(renewed)
    }

    /// A run longer than its lease (one call to Apple with retries and a
    /// Retry-After wait) keeps the job: the heartbeat renews the lease, so
    /// no second instance runs the job beside it. Before, the 20 s lease ran
    /// out under a live holder.
    func testALiveHoldersHeartbeatKeepsTheLeaseThroughALongRun() async throws {
        let store = try await PaymentsTestDatabase.store()
        let job = job()
        let lease = SyncJobLease(job: job, owner: "a", duration: .milliseconds(300), store: store)
        _ = try await store.acquireSyncJob(job, owner: "a", lease: lease.duration)
        let rivalWon = Mutex(false)
        let outcome = await SyncJobRunner.holdingLease(lease, logger: Logger(service: "test")) {
            // Three leases long, a rival trying all along.
            for _ in 0..<9 {
                try? await Task.sleep(for: .milliseconds(100))
                if (try? await store.acquireSyncJob(job, owner: "b", lease: .seconds(30))) != nil {
                    rivalWon.withLock { $0 = true }
                }
            }
            return .completed
        }
        XCTAssertEqual(outcome, SyncJobOutcome.completed)
        XCTAssertFalse(rivalWon.withLock { $0 }, "no other instance took the job while its holder ran")
        let renewed = try await store.renewSyncJob(job, owner: "a", lease: .seconds(30))
        XCTAssertTrue(renewed, "still a's")
    }

    /// A holder whose lease was taken over (it stalled past it) stops: the
    /// body is cancelled and the run ends lostLease.
    func testAHeartbeatThatFindsTheLeaseTakenOverStopsTheRun() async throws {
        let store = try await PaymentsTestDatabase.store()
        let job = job()
        let lease = SyncJobLease(job: job, owner: "a", duration: .milliseconds(300), store: store)
        _ = try await store.acquireSyncJob(job, owner: "a", lease: lease.duration)
        try await store.pool.withConnection { connection in
            _ = try await connection.query(
                "update apple_sync_jobs set lease_owner = 'b', lease_until = now() + interval '30 seconds' where job = $1",
                [.text(job)])
        }
        let started = ContinuousClock.now
        let outcome = await SyncJobRunner.holdingLease(lease, logger: Logger(service: "test")) {
            try? await Task.sleep(for: .seconds(20))
            return .completed
        }
        XCTAssertEqual(outcome, SyncJobOutcome.lostLease)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10), "the body was cancelled")
    }

    func testTheWindowInProgressAndTheResumePointSurviveTheHolder() async throws {
        let store = try await PaymentsTestDatabase.store()
        let job = job()
        _ = try await store.acquireSyncJob(job, owner: "a", lease: .seconds(30))
        let window = NotificationRecoveryWindow(startMilliseconds: 1_000, endMilliseconds: 5_000, onlyFailures: true)
        let saved = try await store.saveSyncWindow(
            job, owner: "a", window: window, pageToken: "page-2", lease: .milliseconds(100))
        XCTAssertTrue(saved)
        try await Task.sleep(for: .milliseconds(250))
        // a died mid-window; b continues from the stored page.
        let resumed = try await store.acquireSyncJob(job, owner: "b", lease: .seconds(30))
        XCTAssertEqual(resumed?.window, window)
        XCTAssertEqual(resumed?.pageToken, "page-2")
        let completed = try await store.completeSyncWindow(job, owner: "b", resumeMilliseconds: 5_000)
        XCTAssertTrue(completed)
        let backwards = try await store.completeSyncWindow(job, owner: "b", resumeMilliseconds: 3_000)
        XCTAssertTrue(backwards)
        _ = try await store.finishSyncJob(job, owner: "b", nextRunAtMilliseconds: 0, outcome: "completed")
        let next = try await store.acquireSyncJob(job, owner: "c", lease: .seconds(30))
        XCTAssertEqual(next?.resumeMilliseconds, 5_000, "the resume point never moves back")
        XCTAssertNil(next?.window)
        XCTAssertNil(next?.pageToken)
    }

    func testStuckRowsAreAskedAboutOncePerInterval() async throws {
        let store = try await PaymentsTestDatabase.store()
        let received = PaymentsTestDatabase.newPayment(claimed: false)
        try await PaymentsTestDatabase.record(store, received)
        let young = PaymentsTestDatabase.newPayment(claimed: false)
        try await PaymentsTestDatabase.record(store, young)
        try await store.pool.withConnection { connection in
            _ = try await connection.query(
                "update apple_iap_transactions set created_at = now() - interval '2 hours' where transaction_id = $1",
                [.text(received.transactionId)])
        }
        let first = try await store.claimStuckRows(stuckAfter: .seconds(3600), maximumAgeDays: 180, limit: 10_000)
        XCTAssertTrue(first.contains { $0.transactionId == received.transactionId })
        XCTAssertFalse(first.contains { $0.transactionId == young.transactionId }, "received a moment ago")
        let second = try await store.claimStuckRows(stuckAfter: .seconds(3600), maximumAgeDays: 180, limit: 10_000)
        XCTAssertFalse(second.contains { $0.transactionId == received.transactionId }, "asked about within the hour")
        // A sweep that stopped before asking about it releases it: due at once.
        try await store.releaseStuckRows(transactionIds: [received.transactionId])
        let third = try await store.claimStuckRows(stuckAfter: .seconds(3600), maximumAgeDays: 180, limit: 10_000)
        XCTAssertTrue(third.contains { $0.transactionId == received.transactionId }, "released")
    }

    func testTextArrayLiteralReadsBackAsItself() async throws {
        let store = try await PaymentsTestDatabase.store()
        let elements = ["1000000123", "", "a,b", #"quo"te"#, #"back\slash"#, "{brace}", "NULL", " spaced "]
        let read = try await store.pool.withConnection { connection in
            try await connection.query(
                "select unnest($1::text[]) as element", [.text(PaymentsStore.textArrayLiteral(elements))]
            )
            .map { try $0.string("element") }
        }
        XCTAssertEqual(read, elements)
    }

    func testARowOwingAStepIsStuckFromWhenItBecameOwedWhateverItsRetries() async throws {
        let store = try await PaymentsTestDatabase.store()
        let owing = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, owing)
        try await store.pool.withConnection { connection in
            _ = try await connection.query(
                "update apple_iap_transactions set owed_since = now() - interval '2 hours' where transaction_id = $1",
                [.text(owing.transactionId)])
        }
        // The worker's retries keep touching the row; it is still stuck.
        let seen = try await store.find(transactionId: owing.transactionId)
        _ = try await store.postpone(.grant, seen: try XCTUnwrap(seen), error: "PointsService unavailable")
        let stuck = try await store.claimStuckRows(stuckAfter: .seconds(3600), maximumAgeDays: 180, limit: 10_000)
        XCTAssertTrue(stuck.contains { $0.transactionId == owing.transactionId })
        // Once granted, nothing is owed: owed_since is cleared.
        _ = try await store.complete(.grant, with: .granted(), transactionId: owing.transactionId)
        let owedSince = try await store.pool.withConnection { connection in
            try await connection.query(
                "select owed_since from apple_iap_transactions where transaction_id = $1", [.text(owing.transactionId)]
            )
            .first?.optionalString("owed_since")
        }
        XCTAssertNil(owedSince)
    }

    func testSweepAnchorsAreTheNewestCreditedPurchasePerUserAndEnvironmentAfterTheCursor() async throws {
        let store = try await PaymentsTestDatabase.store()
        let users = (0..<3).map { _ in UUID() }.sorted { $0.uuidString.lowercased() < $1.uuidString.lowercased() }
        var newest: [UUID: String] = [:]
        for user in users {
            for age in [3, 1] {
                var payment = PaymentsTestDatabase.newPayment(userId: user)
                payment.environment = "Production"
                payment.purchaseDateUnixMilliseconds =
                    Int64(Date().timeIntervalSince1970 * 1000) - Int64(age) * 86_400_000
                try await PaymentsTestDatabase.record(store, payment)
                _ = try await store.complete(.grant, with: .granted(), transactionId: payment.transactionId)
                if age == 1 { newest[user] = payment.transactionId }
            }
        }
        let before = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!
        let all = try await store.sweepAnchors(after: before, lookbackDays: 30, limit: 100_000).filter {
            users.contains($0.userId)
        }
        XCTAssertEqual(all.map(\.transactionId), users.map { newest[$0]! })
        let afterFirst = try await store.sweepAnchors(after: users[0], lookbackDays: 30, limit: 100_000).filter {
            users.contains($0.userId)
        }
        XCTAssertEqual(afterFirst.map(\.userId), Array(users.dropFirst()))
        let tooOld = try await store.sweepAnchors(after: before, lookbackDays: 0, limit: 100_000).filter {
            users.contains($0.userId)
        }
        XCTAssertEqual(tooOld, [])
    }
}
