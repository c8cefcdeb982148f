import Contracts
import Foundation
@testable import PointsService
import PostgresClient
import RPCRuntime
import ServiceKitDatabase
import Synchronization
import XCTest

/// Group commit of spends on the real database: `points_spend_many` decides
/// and writes per spend exactly what `points_spend` does (the reference,
/// run on twin users with the same history), is all or nothing, and
/// through the store concurrent spends share statements and each applies
/// once.
final class SpendBatchTests: PointsStoreTestCase {
    /// One spend's request (validated as the store validates it).
    private func spend(_ user: UUID, _ amount: Int64, eventId: String = "chat.test:\(UUID().uuidString)") throws
        -> ValidatedSpend
    {
        try SpendCommand(
            eventId: eventId, userId: user.uuidString, amount: amount, bizType: "chat", bizId: "session-7",
            metadataJSON: #"{"model":"m1","tokens":1234}"#
        ).validated()
    }

    /// Everything spends and credits wrote for `user`, in order, with ids,
    /// event ids, times and fingerprints left out (they name the user).
    private func written(_ user: UUID) async throws -> [String] {
        try await store.pool.withConnection { connection in
            let rows = try await connection.query(
                """
                select format('account %s %s %s', a.balance, a.lifetime_earned, a.lifetime_spent) as line from user_points a where a.user_id = $1::uuid
                union all
                select * from (select format('lot %s %s %s', t.credited, t.remaining, t.spent)
                               from credit_lots t where t.user_id = $1::uuid order by t.seq) lots
                union all
                select * from (select format('ledger %s %s %s %s %s %s %s %s', l.change_type, l.direction, l.amount, l.balance_after,
                                             l.biz_type, coalesce(l.biz_id, '-'), l.metadata -> 'ext',
                                             jsonb_path_query_array(l.metadata, '$.attribution[*].amount'))
                               from points_ledger l where l.user_id = $1::uuid order by l.seq) ledger
                union all
                select * from (select format('movement %s', m.amount) from lot_movements m
                               join points_ledger l on l.event_id = m.event_id
                               join credit_lots t on t.user_id = m.user_id and t.source_event_id = m.source_event_id
                               where m.user_id = $1::uuid order by l.seq, t.seq) movements
                """, [.uuid(user)])
            return try rows.map { try $0.string("line") }
        }
    }

    /// The kind of an outcome and its balance, with the attribution's amounts (its lot ids name the user).
    private func summary(_ outcome: SpendBatchStatement.Outcome) throws -> String {
        switch outcome.decision {
        case .applied(_, let attribution):
            return "applied \(outcome.balance) \(try PointsStore.shares(attribution).map(\.amount))"
        case .stored: return "stored \(outcome.balance)"
        case .insufficient: return "insufficient \(outcome.balance)"
        case .drift: return "drift \(outcome.balance)"
        }
    }

    private func runBatch(_ spends: [ValidatedSpend]) async throws -> [SpendBatchStatement.Outcome] {
        try await store.pool.withConnection { try await SpendBatchStatement.execute(spends, on: $0) }
    }

    private func runAlone(_ spend: ValidatedSpend) async throws -> SpendBatchStatement.Outcome {
        try await store.pool.withConnection { connection in
            let (decision, balance) = try await SpendStatement.run(spend, on: connection)
            return SpendBatchStatement.Outcome(decision: decision, balance: balance)
        }
    }

    func testTheBatchDecidesAndWritesWhatPointsSpendDoes() async throws {
        // Per case: the credits given (one lot each), the spends before, the spend under test.
        let cases: [(lots: [Int64], before: [Int64], amount: Int64)] = [
            ([100], [], 40),  // one lot, part of it
            ([30, 50, 20], [], 70),  // across two lots, oldest first
            ([30, 50, 20], [10], 90),  // the whole balance, across three lots
            ([25, 25], [5, 5], 41),  // more than the balance: insufficient
            ([], [], 1),  // no account: insufficient
            ([60, 40], [20], 30),  // the first lot partly spent before
        ]
        var batched: [ValidatedSpend] = [], twins: [(UUID, UUID)] = []
        var single: [ValidatedSpend] = []
        for (lots, before, amount) in cases {
            let pair = (newUser(), newUser())
            for user in [pair.0, pair.1] {
                for credits in lots { try await PointsTestDatabase.adjust(store, userId: user, amount: credits) }
                for spent in before { try await PointsTestDatabase.spend(store, userId: user, amount: spent) }
            }
            twins.append(pair)
            batched.append(try spend(pair.0, amount))
            single.append(try spend(pair.1, amount))
        }
        // A replay: the event id of a spend the user already made.
        let replayer = (newUser(), newUser())
        var replayed: [ValidatedSpend] = []
        for user in [replayer.0, replayer.1] {
            try await PointsTestDatabase.adjust(store, userId: user, amount: 50)
            let first = try spend(user, 15)
            _ = try await store.spend(
                SpendCommand(
                    eventId: first.eventId, userId: user.uuidString, amount: 15, bizType: "chat",
                    bizId: "session-7", metadataJSON: #"{"model":"m1","tokens":1234}"#))
            replayed.append(first)
        }
        twins.append(replayer)
        batched.append(replayed[0])
        single.append(replayed[1])

        let outcomes = try await runBatch(batched)
        XCTAssertEqual(outcomes.count, batched.count)
        var kinds: [String] = []
        for index in batched.indices {
            let reference = try await runAlone(single[index])
            XCTAssertEqual(try summary(outcomes[index]), try summary(reference), "case \(index)")
            kinds.append(String(try summary(outcomes[index]).prefix { $0 != " " }))
            let batchWrote = try await written(twins[index].0)
            let singleWrote = try await written(twins[index].1)
            XCTAssertEqual(batchWrote, singleWrote, "case \(index)")
        }
        XCTAssertEqual(kinds, ["applied", "applied", "applied", "insufficient", "insufficient", "applied", "stored"])
        XCTAssertEqual(try summary(outcomes[1]), "applied 100 [30, 40]")
        XCTAssertEqual(try summary(outcomes[2]), "applied 90 [20, 50, 20]")
    }

    func testADriftingUserIsAnsweredDriftWithNothingWrittenAndTheOthersApply() async throws {
        let drifting = newUser(), other = newUser()
        for user in [drifting, other] {
            try await PointsTestDatabase.adjust(store, userId: user, amount: 30)
            try await PointsTestDatabase.adjust(store, userId: user, amount: 20)
        }
        // A lot lost (as for credits granted before lots existed): the open lots no longer add up to the balance.
        try await store.pool.withConnection { connection in
            _ = try await connection.query(
                """
                delete from credit_lots where seq = (select max(seq) from credit_lots where user_id = $1::uuid)
                """, [.uuid(drifting)])
        }
        let before = try await written(drifting)
        let outcomes = try await runBatch([try spend(drifting, 10), try spend(other, 35)])
        XCTAssertEqual(try outcomes.map(summary), ["drift 50", "applied 50 [30, 5]"])
        let after = try await written(drifting)
        XCTAssertEqual(after, before, "a drifting user's spend writes nothing")
        // The store heals the lots and applies it, as after a lone call.
        let result = try await store.spend(
            SpendCommand(
                eventId: "chat.test:\(UUID().uuidString)", userId: drifting.uuidString, amount: 10,
                bizType: "chat", bizId: "session-7"))
        XCTAssertEqual(result.balanceAfter, 40)
    }

    /// The window between the batch's two statements: an account that did
    /// not exist when the batch locked its accounts (a first grant commits
    /// while the batch waits for another user's lock) is not spent from,
    /// as `points_spend` finds no row to lock and answers insufficient.
    /// Spending from it would leave it unlocked, and a second grant's
    /// credits could be overwritten.
    func testAnAccountCreatedWhileTheBatchWaitsForItsLocksIsNotSpentFrom() async throws {
        let held = newUser()
        try await PointsTestDatabase.adjust(store, userId: held, amount: 50)
        // Written by hand below, and not checked by tearDown's invariants (no ledger row).
        let late = UUID()
        let phase = Mutex(0)  // 1: the "grant" holds its locks; 2: it may commit
        let pool = store.pool
        let grant = Task {
            try await pool.withTransaction { connection in
                _ = try await connection.query(
                    "select balance from user_points where user_id = $1::uuid for update", [.uuid(held)])
                _ = try await connection.query(
                    "insert into user_points (user_id, balance, lifetime_earned) values ($1::uuid, 50, 50)",
                    [.uuid(late)])
                _ = try await connection.query(
                    """
                    insert into credit_lots (user_id, source_event_id, credited, remaining) values ($1::uuid, 'late-grant:' || $1::text, 50, 50)
                    """, [.uuid(late)])
                phase.withLock { $0 = 1 }
                while phase.withLock({ $0 }) < 2 { try await Task.sleep(for: .milliseconds(5)) }
            }
        }
        while phase.withLock({ $0 }) < 1 { try await Task.sleep(for: .milliseconds(5)) }
        let spends = [try spend(late, 10), try spend(held, 10)]
        let batch = Task { try await pool.withConnection { try await SpendBatchStatement.execute(spends, on: $0) } }
        // Commit the grant only once the batch waits for the held account's lock.
        var waited = false
        for _ in 0..<400 where !waited {
            try await Task.sleep(for: .milliseconds(5))
            waited = try await pool.withConnection { connection in
                try await connection.query(
                    """
                    select count(*) as waiting from pg_stat_activity
                    where wait_event_type = 'Lock' and query like '%points_spend_many%'
                    """
                ).first?.int64("waiting") ?? 0 > 0
            }
        }
        XCTAssertTrue(waited, "the batch waits for the held account")
        phase.withLock { $0 = 2 }
        try await grant.value
        let outcomes = try await batch.value
        XCTAssertEqual(try outcomes.map(summary), ["insufficient 0", "applied 50 [10]"])
        let lateBalance = try await store.getBalance(userId: late.uuidString)
        XCTAssertEqual(lateBalance.balance, 50, "nothing was taken from the account the batch did not lock")
    }

    func testABatchTakesEachUserOnceAndFailsWhole() async throws {
        let user = newUser(), other = newUser()
        for account in [user, other] { try await PointsTestDatabase.adjust(store, userId: account, amount: 50) }
        let before = try await written(user)
        let otherBefore = try await written(other)
        do {
            _ = try await runBatch([try spend(user, 10), try spend(other, 10), try spend(user, 5)])
            XCTFail("one user twice in a batch is refused")
        } catch let error as PostgresError {
            XCTAssertEqual(error.sqlState, "P0001")
        }
        let after = try await written(user)
        let otherAfter = try await written(other)
        XCTAssertEqual(after, before)
        XCTAssertEqual(otherAfter, otherBefore, "nothing of a failed batch is written")
    }

    func testConcurrentSpendsThroughTheStoreShareStatementsAndEachAppliesOnce() async throws {
        let sizes = Mutex<[Int]>([])
        let batching = PointsStore(
            pool: store.pool, catalog: store.catalog,
            observeSpendCommits: { writes, failed in
                XCTAssertFalse(failed)
                sizes.withLock { $0.append(writes) }
            })
        let spenders = (0..<24).map { _ in newUser() }
        for user in spenders { try await PointsTestDatabase.adjust(store, userId: user, amount: 100) }
        let results = try await withThrowingTaskGroup(of: SpendResult.self) { group in
            for (index, user) in spenders.enumerated() {
                group.addTask {
                    try await batching.spend(
                        SpendCommand(
                            eventId: "chat.test:\(UUID().uuidString)", userId: user.uuidString,
                            amount: Int64(index + 1), bizType: "chat", bizId: "session-7"))
                }
            }
            return try await group.reduce(into: [SpendResult]()) { $0.append($1) }
        }
        XCTAssertEqual(results.count, 24)
        for result in results {
            XCTAssertFalse(result.replayed)
            XCTAssertEqual(result.balanceAfter + result.amount, 100)
            XCTAssertEqual(result.attributions.map(\.amount), [result.amount])
        }
        for (index, user) in spenders.enumerated() {
            let balance = try await store.getBalance(userId: user.uuidString)
            XCTAssertEqual(balance.balance, 100 - Int64(index + 1))
            XCTAssertEqual(balance.lifetimeSpent, Int64(index + 1))
        }
        let counted = sizes.withLock { $0 }
        XCTAssertEqual(counted.reduce(0, +), 24, "every spend was carried once")
        XCTAssertGreaterThan(counted.max() ?? 0, 1, "concurrent spends shared a statement (\(counted))")
    }

    /// As PointsService runs: the spends' tasks, the batches and the pool's
    /// sockets on one event loop. Every spend applies once, spends share
    /// statements, and the batches ran on the loop.
    func testSpendsOnTheServicesLoopShareStatementsAndEachAppliesOnce() async throws {
        let loop = try EventLoop(name: "points-test")
        let pool = PostgresPool(
            configuration: .init(
                connectionString: try XCTUnwrap(ProcessInfo.processInfo.environment["POINTS_DATABASE_URL"]),
                connectionsMax: 4,
                socketEvents: EventLoopSocketEvents(loop: loop)))
        let batches = Mutex<[(writes: Int, onLoop: Bool)]>([])
        let onLoop = PointsStore(
            pool: pool, catalog: store.catalog,
            observeSpendCommits: { writes, failed in
                XCTAssertFalse(failed)
                batches.withLock { $0.append((writes, loop.inEventLoop)) }
            }, batchExecutor: loop)
        let spenders = (0..<24).map { _ in newUser() }
        for user in spenders { try await PointsTestDatabase.adjust(store, userId: user, amount: 50) }
        let results = try await withThrowingTaskGroup(of: SpendResult.self) { group in
            for user in spenders {
                group.addTask(executorPreference: loop) {
                    try await onLoop.spend(
                        SpendCommand(
                            eventId: "chat.test:\(UUID().uuidString)", userId: user.uuidString,
                            amount: 7, bizType: "chat", bizId: "session-7"))
                }
            }
            return try await group.reduce(into: [SpendResult]()) { $0.append($1) }
        }
        XCTAssertEqual(results.map(\.balanceAfter), Array(repeating: 43, count: 24))
        for user in spenders {
            let balance = try await store.getBalance(userId: user.uuidString)
            XCTAssertEqual(balance.balance, 43)
            XCTAssertEqual(balance.lifetimeSpent, 7)
        }
        let counted = batches.withLock { $0 }
        XCTAssertEqual(counted.map(\.writes).reduce(0, +), 24, "every spend was carried once")
        XCTAssertGreaterThan(counted.map(\.writes).max() ?? 0, 1, "spends shared a statement")
        XCTAssertTrue(counted.allSatisfy(\.onLoop), "every batch ran on the loop")
        await pool.close()
        await loop.shutdown()
    }
}
