import Contracts
import Foundation
@testable import PointsService
import PostgresClient
import ServiceKitDatabase
import Synchronization
import XCTest

/// Group commit of regular grants on the real database: the batch statement
/// writes what single statements write, is all or nothing, and through the
/// store every grant still applies exactly once with the same answers.
final class GrantBatchTests: PointsStoreTestCase {
    private func request(user: UUID, product: String = "popular_pack", transactionId: String? = nil) -> GrantRequest {
        let transactionId = transactionId ?? String(UInt64.random(in: 1_000_000_000_000...9_999_999_999_999_999))
        return GrantRequest(
            eventId: "payment.apple_iap:\(transactionId)", userId: user.uuidString,
            emailHash: PointsTestDatabase.randomEmailHash(), productCode: product, bizId: "record-\(transactionId)",
            source: PurchaseSource(
                source: "apple_iap", platform: "ios", transactionId: transactionId,
                originalTransactionId: transactionId,
                environment: "Sandbox", appStoreProductId: "com.meeyao.qianwen.\(product)",
                paymentRecordId: "record-\(transactionId)"),
            emailMasked: "a***@example.com", quantity: 2)
    }

    private func validated(_ request: GrantRequest) throws -> ValidatedGrant {
        try ValidatedGrant(request: request, catalog: store.catalog)
    }

    private func runBatch(_ grants: [ValidatedGrant]) async throws -> [GrantBatchStatement.Outcome] {
        try await store.pool.withConnection { connection in
            try GrantBatchStatement.outcomes(
                try await connection.query(GrantBatchStatement.sql, GrantBatchStatement.parameters(grants)),
                of: grants)
        }
    }

    /// What purchases wrote for `user` (the account, its purchase rows and
    /// their lots), ids, times and the fingerprint (it holds the user id) left out.
    private func written(_ user: UUID) async throws -> [String] {
        try await store.pool.withConnection { connection in
            let rows = try await connection.query(
                """
                select format('account %s %s %s', a.balance, a.lifetime_earned, a.lifetime_spent) as line from user_points a where a.user_id = $1::uuid
                union all
                select * from (select format('ledger %s %s %s %s %s %s %s', l.change_type, l.direction, l.amount, l.balance_after,
                                             l.biz_type, l.biz_id, l.metadata)
                               from points_ledger l where l.user_id = $1::uuid and l.change_type = 'purchase' order by l.seq) ledger
                union all
                select * from (select format('lot %s %s %s', t.credited, t.remaining, t.spent)
                               from credit_lots t where t.user_id = $1::uuid and t.source_event_id like 'payment.%' order by t.seq) lots
                """, [.uuid(user)])
            return try rows.map { try $0.string("line") }
        }
    }

    func testTheBatchStatementWritesWhatSingleStatementsWrite() async throws {
        // Twin users: the same purchases (same transaction ids, so the same
        // metadata), some on accounts that already hold credits.
        let batchUsers = (0..<5).map { _ in newUser() }
        let singleUsers = (0..<5).map { _ in newUser() }
        for index in [1, 3] {
            for user in [batchUsers[index], singleUsers[index]] {
                try await PointsTestDatabase.adjust(store, userId: user, amount: 70)
            }
        }
        let transactionIds = (0..<5).map { _ in String(UInt64.random(in: 1_000_000_000_000...9_999_999_999_999_999)) }
        let products = ["popular_pack", "premium_pack", "popular_pack", "starter_pack", "premium_pack"]
        let batch = try (0..<5).map {
            try validated(request(user: batchUsers[$0], product: products[$0], transactionId: transactionIds[$0]))
        }
        let outcomes = try await runBatch(batch)
        for index in 0..<5 {
            var single = request(
                user: singleUsers[index], product: products[index], transactionId: transactionIds[index])
            // Event ids are unique across users; the rest of the request is the twin's.
            single.eventId += ".single"
            let result = try await store.pool.withConnection { connection in
                try GrantStatement.outcome(
                    try await connection.query(
                        GrantStatement.sql, GrantStatement.parameters(try self.validated(single))))
            }
            guard case .applied(_, let singleBalance) = result, case .applied(_, let batchBalance) = outcomes[index]
            else {
                return XCTFail("both apply: \(result) \(outcomes[index])")
            }
            XCTAssertEqual(batchBalance, singleBalance)
            let batchWrote = try await written(batchUsers[index])
            let singleWrote = try await written(singleUsers[index])
            XCTAssertEqual(batchWrote.count, 3)
            XCTAssertEqual(batchBalance, (index == 1 || index == 3 ? 70 : 0) + 2 * [210, 415, 210, 100, 415][index])
            let fingerprint = try await store.pool.withConnection { connection in
                try await connection.query(
                    "select request_fingerprint from points_ledger where event_id = $1", [.text(batch[index].eventId)]
                )
                .first!.string("request_fingerprint")
            }
            XCTAssertEqual(fingerprint, batch[index].fingerprint)
            XCTAssertEqual(
                batchWrote.map { $0.replacingOccurrences(of: transactionIds[index], with: "T") },
                singleWrote.map { $0.replacingOccurrences(of: transactionIds[index], with: "T") })
        }
    }

    func testTheBalanceCapRefusesOnlyItsGrantAndWritesNothingForIt() async throws {
        // An account near the cap, written directly (not a newUser: its ledger is not the story here).
        let capped = UUID()
        try await store.pool.withConnection { connection in
            _ = try await connection.query(
                "insert into user_points (user_id, balance, lifetime_earned) values ($1::uuid, $2::bigint, $2::bigint)",
                [.uuid(capped), .int64(PointsLimits.balanceMax - 10)])
        }
        let others = (0..<3).map { _ in newUser() }
        let grants = try ([capped] + others).map { try validated(request(user: $0)) }
        let outcomes = try await runBatch(grants)
        XCTAssertEqual(outcomes.first, .refusedAtBalanceMax)
        for outcome in outcomes.dropFirst() {
            guard case .applied(_, let balance) = outcome else { return XCTFail("applied: \(outcome)") }
            XCTAssertEqual(balance, 420)
        }
        let cappedWrote = try await written(capped)
        XCTAssertEqual(cappedWrote, ["account \(PointsLimits.balanceMax - 10) \(PointsLimits.balanceMax - 10) 0"])
    }

    func testAReplayedEventIdFailsTheWholeBatchAndWritesNothing() async throws {
        let first = newUser()
        let second = newUser()
        let applied = request(user: first)
        _ = try await store.grant(applied)
        let before = try await written(first)
        do {
            _ = try await runBatch([try validated(applied), try validated(request(user: second))])
            XCTFail("the replayed event id must fail the statement")
        } catch let error as PostgresError {
            XCTAssertTrue(error.isUniqueViolation, "\(error)")
        }
        let firstAfter = try await written(first)
        let secondAfter = try await written(second)
        XCTAssertEqual(firstAfter, before)
        XCTAssertEqual(secondAfter, [], "nothing of the batch was written")
    }

    /// A failed batch answers `.runAlone` for each of its grants, and only
    /// applied ones wrote anything.
    func testAFailedBatchSendsEachOfItsGrantsOffAlone() async throws {
        let replayed = request(user: newUser())
        _ = try await store.grant(replayed)
        let observed = Mutex(PointsTestDatabase.CommitCounts())
        var limits = CommitBatchLimits(connectionsMax: 1)
        limits.batchesInFlightMax = 1
        let batcher = CommitBatcher<GrantBatchStatement>(pool: store.pool, limits: limits) { writes, failed in
            observed.withLock { $0.record(writes: writes, failed: failed) }
        }
        let fresh = try (0..<20).map { _ in try validated(request(user: newUser())) }
        let grants = [try validated(replayed)] + fresh
        let answers = await withTaskGroup(of: (String, CommitBatcher<GrantBatchStatement>.Answer).self) { group in
            for grant in grants { group.addTask { (grant.eventId, await batcher.submit(grant)) } }
            var answers: [String: CommitBatcher<GrantBatchStatement>.Answer] = [:]
            for await (eventId, answer) in group { answers[eventId] = answer }
            return answers
        }
        guard case .runAlone? = answers[replayed.eventId] else { return XCTFail("the replayed grant runs alone") }
        for grant in fresh {
            let rows = try await store.pool.withConnection { connection in
                try await connection.query(
                    "select count(*) as c from points_ledger where event_id = $1", [.text(grant.eventId)]
                ).first!.int64("c")
            }
            switch answers[grant.eventId] {
            case .outcome(.applied)?: XCTAssertEqual(rows, 1)
            case .runAlone?:
                XCTAssertEqual(rows, 0)
                _ = try await store.grant(
                    request(
                        user: grant.userId, transactionId: String(grant.eventId.dropFirst("payment.apple_iap:".count))))
            default: XCTFail("unexpected answer \(String(describing: answers[grant.eventId]))")
            }
        }
        let counts = observed.withLock { $0 }
        XCTAssertGreaterThanOrEqual(counts.failed, 1, "the batch holding the replay failed")
        XCTAssertEqual(counts.writes, grants.count, "the observer hears of every statement")
    }

    /// Through the store, under concurrency: distinct users, one user with
    /// many purchases, and the same purchases submitted twice at once. Every
    /// purchase applies once, its copies answer as replays of it, and the
    /// grants did go through shared statements.
    func testConcurrentGrantsGoTogetherAndEachAppliesOnce() async throws {
        let store: PointsStore = self.store
        let before = PointsTestDatabase.grantCommits.withLock { $0 }
        let busy = newUser()
        let distinct = (0..<60).map { _ in request(user: newUser()) }
        let sameUser = (0..<20).map { _ in request(user: busy) }
        let twice = distinct.prefix(20) + sameUser.prefix(10)
        let submissions = (distinct + sameUser + twice).shuffled()
        let results = try await withThrowingTaskGroup(of: (String, GrantResult).self) { group in
            for submission in submissions { group.addTask { (submission.eventId, try await store.grant(submission)) } }
            var results: [(String, GrantResult)] = []
            for try await result in group { results.append(result) }
            return results
        }
        let byEvent = Dictionary(grouping: results, by: \.0)
        XCTAssertEqual(byEvent.count, 80)
        for (eventId, answers) in byEvent {
            XCTAssertEqual(answers.filter { !$0.1.replayed }.count, 1, eventId)
            XCTAssertEqual(Set(answers.map(\.1.ledgerEntryId)).count, 1, eventId)
            XCTAssertTrue(answers.allSatisfy { $0.1.creditsAdded == 420 }, eventId)
        }
        let busyBalance = try await store.getBalance(userId: busy.uuidString).balance
        XCTAssertEqual(busyBalance, 20 * 420)
        let after = PointsTestDatabase.grantCommits.withLock { $0 }
        XCTAssertGreaterThan(
            after.writes - before.writes, after.statements - before.statements,
            "some statement carried more than one grant: \(before) -> \(after)")
    }
}
