import Foundation
@testable import PointsService
import PostgresClient
import Synchronization
import TestSupport
import XCTest

/// The shared store of the integration tests: POINTS_DATABASE_URL, migrated
/// once per test run. Tests isolate by fresh random user ids and email hashes.
enum PointsTestDatabase {
    private actor Shared {
        var store: PointsStore?

        func store(url: String) async throws -> PointsStore {
            if let store { return store }
            let pool = PostgresPool(
                configuration: .init(connectionString: url, connectionsMax: 8, acquireTimeout: .seconds(30)))
            let created = PointsStore(
                pool: pool, catalog: try PackageCatalog.load(path: ShippedConfiguration.packagesFile),
                observeGrantCommits: { writes, failed in
                    grantCommits.withLock { $0.record(writes: writes, failed: failed) }
                })
            try await created.migrate()
            store = created
            return created
        }
    }

    private static let shared = Shared()

    /// What the shared store's grant statements carried (its batcher's observer).
    static let grantCommits = Mutex(CommitCounts())

    /// Grant statements counted through a batcher's observer.
    struct CommitCounts: Sendable {
        var statements = 0
        var writes = 0
        var failed = 0

        mutating func record(writes count: Int, failed hasFailed: Bool) {
            statements += 1
            writes += count
            if hasFailed { failed += 1 }
        }
    }

    static func store() async throws -> PointsStore {
        guard let url = ProcessInfo.processInfo.environment["POINTS_DATABASE_URL"], !url.isEmpty else {
            let message =
                "POINTS_DATABASE_URL is not set: run scripts/test.sh, or eval \"$(scripts/pg.sh start | sed 's/^/export /')\""
            XCTFail(message)
            throw PointsError.databaseUnavailable(detail: message)
        }
        return try await shared.store(url: url)
    }

    static func randomEmailHash() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// What the chat service does when a user spends credits: Points.Spend
    /// through the store (a consume row, lifetime_spent, the lots).
    static func spend(_ store: PointsStore, userId: UUID, amount: Int64) async throws {
        _ = try await store.spend(
            SpendCommand(
                eventId: "chat.test:\(UUID().uuidString)", userId: userId.uuidString,
                amount: amount, bizType: "chat", bizId: "session"))
    }

    /// An operator's adjustment that credits `amount` (`PointsService adjust` through the store).
    static func adjust(_ store: PointsStore, userId: UUID, amount: Int64) async throws {
        _ = try await store.adjust(
            AdjustCommand(
                userId: userId.uuidString, amount: amount, reason: "test credit",
                operatorName: "tests", eventId: "adjust.test:\(UUID().uuidString)"))
    }

    /// The ledger invariants, for each user:
    /// - balance == Σ direction × amount over all of the user's rows;
    /// - lifetime_spent == Σ amount of consume rows − Σ of their reversals;
    /// - the credit lots' remaining add up to the balance, and no lot gives
    ///   more than it had (remaining + spent <= credited);
    /// - lifetime_earned == Σ direction × amount of every other row
    ///   (purchases − refunded deductions + reversals), hence balance == earned − spent;
    /// - rows in insertion order chain: each balance_after == previous + direction × amount;
    /// - every refund: deducted + overdue == the amount it took back (metadata
    ///   requested_amount; the purchase's credits for rows written before
    ///   amounts existed), which is never more than the purchase's credits;
    /// - a purchase has at most one unreversed refund at any point of the
    ///   ledger: a new refund of it only after the previous one's reversal;
    /// - a settlement (a spend reversal paying a refund's overdue) pays an
    ///   unreversed refund, and a refund's settlements never pass its overdue;
    /// - every reversal restores exactly its refund's deduction and
    ///   settlements, once.
    static func assertInvariants(
        _ store: PointsStore, users: [UUID], file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        try await assertInvariants(pool: store.pool, users: users, file: file, line: line)
    }

    /// The same checks through any pool on the points database (e.g. a test's own, next to a service process).
    static func assertInvariants(pool: PostgresPool, users: [UUID], file: StaticString = #filePath, line: UInt = #line)
        async throws
    {
        for userId in users {
            try await pool.withConnection { connection in
                let account = try await connection.query(
                    "select balance, lifetime_earned, lifetime_spent from user_points where user_id = $1::uuid",
                    [.uuid(userId)]
                ).first
                let rows = try await connection.query(
                    """
                    select change_type, direction, amount, balance_after, event_id, related_event_id,
                           case when change_type = 'refund' then coalesce((metadata -> 'ext' ->> 'overdue_amount')::bigint, 0) else 0 end
                               as overdue,
                           case when change_type = 'refund' then (metadata -> 'ext' ->> 'requested_amount')::bigint end as requested
                    from points_ledger where user_id = $1::uuid order by seq
                    """, [.uuid(userId)])
                guard let account else {
                    XCTAssertTrue(rows.isEmpty, "ledger rows without an account", file: file, line: line)
                    return
                }
                var running: Int64 = 0
                var earned: Int64 = 0
                var spent: Int64 = 0
                var amounts: [String: Int64] = [:]
                for row in rows {
                    let signed = Int64(try row.int64("direction")) * (try row.int64("amount"))
                    running += signed
                    XCTAssertEqual(
                        try row.int64("balance_after"), running, "balance_after chain", file: file, line: line)
                    switch try row.string("change_type") {
                    case "consume", "consume_reversal": spent -= signed
                    default: earned += signed
                    }
                    amounts[try row.string("event_id")] = try row.int64("amount")
                }
                XCTAssertEqual(
                    try account.int64("balance"), running, "balance == signed ledger sum", file: file, line: line)
                XCTAssertEqual(try account.int64("lifetime_earned"), earned, "lifetime_earned", file: file, line: line)
                XCTAssertEqual(try account.int64("lifetime_spent"), spent, "lifetime_spent", file: file, line: line)
                XCTAssertGreaterThanOrEqual(running, 0, file: file, line: line)
                let lots = try await connection.query(
                    """
                    select coalesce(sum(remaining), 0)::bigint as remaining, count(*) filter (where remaining + spent > credited) as overdrawn
                    from credit_lots where user_id = $1::uuid
                    """, [.uuid(userId)]
                ).first!
                XCTAssertEqual(
                    try lots.int64("remaining"), running, "the lots add up to the balance", file: file, line: line)
                XCTAssertEqual(try lots.int64("overdrawn"), 0, file: file, line: line)
                // The purchase's unreversed refund, and each refund's purchase.
                var openRefund: [String: String] = [:]
                var purchaseOfRefund: [String: String] = [:]
                var reversed = Set<String>()
                var overdueOfRefund: [String: Int64] = [:]
                var settledOfRefund: [String: Int64] = [:]
                for row in rows {
                    switch try row.string("change_type") {
                    case "refund":
                        let purchase = try XCTUnwrap(try row.optionalString("related_event_id"))
                        let refund = try row.string("event_id")
                        XCTAssertNil(
                            openRefund[purchase], "at most one unreversed refund per purchase", file: file, line: line)
                        openRefund[purchase] = refund
                        purchaseOfRefund[refund] = purchase
                        let credits = try XCTUnwrap(
                            amounts[purchase], "a refund of an unknown purchase", file: file, line: line)
                        let requested = try row.optionalInt64("requested") ?? credits
                        XCTAssertLessThanOrEqual(
                            requested, credits, "a refund takes back at most the purchase", file: file, line: line)
                        XCTAssertEqual(
                            try row.int64("amount") + (try row.int64("overdue")), requested,
                            "deducted + overdue == requested", file: file, line: line)
                        overdueOfRefund[refund] = try row.int64("overdue")
                    case "refund_settlement":
                        let refund = try XCTUnwrap(try row.optionalString("related_event_id"))
                        let purchase = try XCTUnwrap(
                            purchaseOfRefund[refund], "a settlement of an unknown refund", file: file, line: line)
                        XCTAssertEqual(
                            openRefund[purchase], refund, "a settlement pays an unreversed refund", file: file,
                            line: line)
                        settledOfRefund[refund, default: 0] += try row.int64("amount")
                        XCTAssertLessThanOrEqual(
                            settledOfRefund[refund] ?? 0, overdueOfRefund[refund] ?? 0,
                            "settlements never pass the refund's overdue", file: file, line: line)
                    case "refund_reversal":
                        let refund = try XCTUnwrap(try row.optionalString("related_event_id"))
                        XCTAssertEqual(
                            try row.int64("amount"), (amounts[refund] ?? -1) + (settledOfRefund[refund] ?? 0),
                            "reversal restores the deduction and the settlements", file: file, line: line)
                        XCTAssertTrue(
                            reversed.insert(refund).inserted, "one reversal per refund", file: file, line: line)
                        let purchase = try XCTUnwrap(
                            purchaseOfRefund[refund], "a reversal of an unknown refund", file: file, line: line)
                        XCTAssertEqual(
                            openRefund[purchase], refund, "a reversal undoes the purchase's open refund", file: file,
                            line: line)
                        openRefund[purchase] = nil
                    default:
                        break
                    }
                }
            }
        }
    }
}
