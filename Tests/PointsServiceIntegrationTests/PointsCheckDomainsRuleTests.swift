import Contracts
import Foundation
@testable import PointsService
import PostgresClient
import XCTest

/// After migration 6 the rules it moved into domains refuse what their
/// table CHECKs refused, on INSERT and on UPDATE (and inside
/// `points_spend`), naming the domain's constraint (SQLSTATE 23514) and
/// writing nothing; the rules it left as table CHECKs still fire; and values
/// still bind into the domain columns the ways the store binds them.
final class PointsCheckDomainsRuleTests: PointsStoreTestCase {
    /// A user holding a granted popular pack: its account, ledger row and lot.
    private func fundedUser() async throws -> (user: UUID, eventId: String) {
        let user = newUser()
        let transactionId = String(UInt64.random(in: 1_000_000_000_000...9_999_999_999_999_999))
        let eventId = "payment.apple_iap:\(transactionId)"
        _ = try await store.grant(
            GrantRequest(
                eventId: eventId, userId: user.uuidString, emailHash: "", productCode: "popular_pack",
                bizId: "apple_iap:\(transactionId)"))
        return (user, eventId)
    }

    func testEachDomainRefusesABadValueInAnUpdateAndWritesNothing() async throws {
        let (user, eventId) = try await fundedUser()
        let hash = PointsTestDatabase.randomEmailHash()
        try await store.pool.withConnection {
            _ = try await $0.query(
                "insert into register_bonus_claims (email_hash, first_user_id_snapshot) values ($1, $2::uuid)",
                [.text(hash), .uuid(user)])
        }
        let updates: [(table: String, assignment: String, key: String, constraint: String)] = [
            ("user_points", "balance = -1", "user_id = '\(user)'", "credit_amount_not_negative"),
            (
                "user_points", "lifetime_earned = lifetime_earned - 1000000", "user_id = '\(user)'",
                "credit_amount_not_negative"
            ),
            ("user_points", "lifetime_spent = -1", "user_id = '\(user)'", "credit_amount_not_negative"),
            ("points_ledger", "event_id = ''", "event_id = '\(eventId)'", "ledger_event_id_not_empty"),
            ("points_ledger", "direction = 0", "event_id = '\(eventId)'", "ledger_direction_plus_or_minus_one"),
            ("points_ledger", "amount = -1", "event_id = '\(eventId)'", "credit_amount_not_negative"),
            ("points_ledger", "balance_after = -1", "event_id = '\(eventId)'", "credit_amount_not_negative"),
            ("points_ledger", "biz_type = 'Pay ment'", "event_id = '\(eventId)'", "ledger_biz_type_format"),
            ("credit_lots", "credited = -1", "source_event_id = '\(eventId)'", "credit_amount_not_negative"),
            ("credit_lots", "spent = -1", "source_event_id = '\(eventId)'", "credit_amount_not_negative"),
            (
                "register_bonus_claims", "email_hash = upper(email_hash)", "email_hash = '\(hash)'",
                "email_hash_hex_format"
            ),
            (
                "register_bonus_claims", "email_hash = left(email_hash, 63)", "email_hash = '\(hash)'",
                "email_hash_hex_format"
            ),
        ]
        let before = try await snapshot(user)
        for update in updates {
            try await expectRefusal(by: update.constraint, "\(update.table): \(update.assignment)") {
                try await $0.query("update \(update.table) set \(update.assignment) where \(update.key)")
            }
        }
        let after = try await snapshot(user)
        XCTAssertEqual(after, before, "no refused update wrote anything")
    }

    func testEachDomainRefusesABadValueInAnInsertAndWritesNothing() async throws {
        let (user, eventId) = try await fundedUser()
        let before = try await snapshot(user)
        let ledger =
            "insert into points_ledger (user_id, event_id, change_type, direction, amount, balance_after, biz_type, request_fingerprint)"
        let inserts: [(statement: String, constraint: String)] = [
            ("insert into user_points (user_id, balance) values (gen_random_uuid(), -1)", "credit_amount_not_negative"),
            (
                "insert into user_points (user_id, lifetime_spent) values (gen_random_uuid(), -5)",
                "credit_amount_not_negative"
            ),
            ("\(ledger) values ('\(user)', '', 'grant', 1, 1, 1, 'chat', '')", "ledger_event_id_not_empty"),
            (
                "\(ledger) values ('\(user)', 'domains:\(UUID())', 'grant', 2, 1, 1, 'chat', '')",
                "ledger_direction_plus_or_minus_one"
            ),
            (
                "\(ledger) values ('\(user)', 'domains:\(UUID())', 'grant', 1, -1, 1, 'chat', '')",
                "credit_amount_not_negative"
            ),
            (
                "\(ledger) values ('\(user)', 'domains:\(UUID())', 'grant', 1, 1, -1, 'chat', '')",
                "credit_amount_not_negative"
            ),
            (
                "\(ledger) values ('\(user)', 'domains:\(UUID())', 'grant', 1, 1, 1, '9chat', '')",
                "ledger_biz_type_format"
            ),
            (
                "insert into credit_lots (user_id, source_event_id, credited, remaining) values ('\(user)', 'domains:\(UUID())', -1, 0)",
                "credit_amount_not_negative"
            ),
            (
                "insert into credit_lots (user_id, source_event_id, credited, remaining, spent) values ('\(user)', 'domains:\(UUID())', 1, 0, -1)",
                "credit_amount_not_negative"
            ),
            (
                "insert into lot_movements (event_id, source_event_id, user_id, amount) values ('domains:\(UUID())', '\(eventId)', '\(user)', 0)",
                "moved_credit_amount_positive"
            ),
            (
                "insert into register_bonus_claims (email_hash, first_user_id_snapshot) values ('\(String(repeating: "g", count: 64))', '\(user)')",
                "email_hash_hex_format"
            ),
        ]
        for insert in inserts {
            try await expectRefusal(by: insert.constraint, insert.statement) { try await $0.query(insert.statement) }
        }
        let after = try await snapshot(user)
        XCTAssertEqual(after, before, "no refused insert wrote anything")
        let strays = try await store.pool.withConnection {
            try await $0.query(
                """
                select (select count(*) from user_points where balance < 0 or lifetime_spent < 0)
                     + (select count(*) from register_bonus_claims where email_hash !~ '^[0-9a-f]{64}$') as n
                """
            ).first!.int64("n")
        }
        XCTAssertEqual(strays, 0)
    }

    /// `points_spend` (plpgsql, migration 5) writes domain columns in its
    /// statements: the domains' rules hold inside it, and a refused call
    /// writes nothing (no movement, lot change, ledger row or balance).
    func testTheSpendFunctionStillSpendsAndItsWritesObeyTheDomains() async throws {
        let (user, _) = try await fundedUser()
        let before = try await snapshot(user)
        let call =
            "select o_outcome as outcome from points_spend($1::uuid, $2, $3::bigint, $4, '', repeat('f', 64), '{}'::jsonb)"
        for (amount, bizType, constraint) in [
            (Int64(-5), "chat", "credit_amount_not_negative"), (5, "Chat Room", "ledger_biz_type_format"),
        ] {
            try await expectRefusal(by: constraint, "points_spend(\(amount), \(bizType))") {
                try await $0.query(
                    call, [.uuid(user), .text("chat.domains:\(UUID())"), .int64(amount), .text(bizType)])
            }
        }
        let after = try await snapshot(user)
        XCTAssertEqual(after, before, "no refused spend wrote anything")
        let spent = try await store.spend(
            SpendCommand(eventId: "chat.domains:\(UUID())", userId: user.uuidString, amount: 40, bizType: "chat"))
        XCTAssertEqual(spent.balanceAfter, before.balance - 40)
    }

    func testTheRulesLeftAsTableChecksStillFire() async throws {
        let (user, eventId) = try await fundedUser()
        let before = try await snapshot(user)
        let ledger =
            "insert into points_ledger (user_id, event_id, change_type, direction, amount, balance_after, biz_type, biz_id, request_fingerprint)"
        let statements: [(statement: String, constraint: String)] = [
            (
                "\(ledger) values ('\(user)', 'domains:\(UUID())', 'purchase', -1, 1, 1, 'payment', 'b', '')",
                "points_ledger_purchase_direction"
            ),
            (
                "\(ledger) values ('\(user)', 'domains:\(UUID())', 'consume', 1, 1, 1, 'chat', null, '')",
                "points_ledger_consume_direction"
            ),
            (
                "\(ledger) values ('\(user)', 'domains:\(UUID())', 'gift', 1, 1, 1, 'chat', null, '')",
                "points_ledger_change_type_check"
            ),
            (
                "\(ledger) values ('\(user)', 'domains:\(UUID())', 'grant', 1, 1, 1, 'support', null, '')",
                "points_ledger_support_biz"
            ),
            (
                "\(ledger) values ('\(user)', 'domains:\(UUID())', 'refund', -1, 1, 1, 'payment', 'b', '')",
                "points_ledger_related_event"
            ),
            (
                "update credit_lots set remaining = remaining + 1 where source_event_id = '\(eventId)'",
                "credit_lots_check"
            ),
            (
                "update credit_lots set remaining = -1 where source_event_id = '\(eventId)'",
                "credit_lots_remaining_check"
            ),
        ]
        for item in statements {
            try await expectRefusal(by: item.constraint, item.statement) { try await $0.query(item.statement) }
        }
        let after = try await snapshot(user)
        XCTAssertEqual(after, before)
    }

    func testValuesBindIntoAndCompareWithDomainColumnsAsTheStoreBindsThem() async throws {
        let (user, eventId) = try await fundedUser()
        let balance = try await store.getBalance(userId: user.uuidString).balance
        try await store.pool.withConnection { connection in
            // Typed and untyped parameters into domain columns (a grant-like credit and a lot), read back through RETURNING.
            // (An untyped parameter must not feed a domain column and a column of its base type at once: PostgreSQL
            // deduces two types for it. The store casts such parameters, e.g. `$3::bigint` in GrantStatement.)
            let typed = try await connection.query(
                """
                update user_points set balance = balance + $2::bigint, lifetime_earned = lifetime_earned + $2::bigint
                where user_id = $1::uuid returning balance, lifetime_earned
                """, [.uuid(user), .int64(5)]
            ).first!
            XCTAssertEqual(try typed.int64("balance"), balance + 5)
            let untyped = try await connection.query(
                """
                insert into credit_lots (user_id, source_event_id, credited, remaining, spent) values ($1::uuid, $2, $3, $4, $5)
                returning credited, spent
                """, [.uuid(user), .text("adjust.domains:\(UUID())"), .int64(5), .int64(5), .int64(0)]
            ).first!
            XCTAssertEqual(try untyped.int64("credited"), 5)
            XCTAssertEqual(try untyped.int64("spent"), 0)
            // Comparisons: = with untyped and typed parameters, IN, = ANY of an array parameter, a pattern.
            let matches: [(String, [PostgresValue])] = [
                ("event_id = $2", [.text(eventId)]),
                ("event_id = $2::text", [.text(eventId)]),
                ("biz_type = $2 and direction = $3 and amount = $4", [.text("payment"), .int64(1), .int64(balance)]),
                ("biz_type in ('payment', 'chat') and direction in (1, -1)", []),
                ("biz_type = any($2)", [.text("{chat,payment}")]),
                (
                    "direction = any($2::smallint[]) and amount = any($3::bigint[])",
                    [.text("{1}"), .text("{\(balance)}")]
                ),
                ("balance_after between $2::bigint and $3::bigint", [.int64(1), .int64(balance)]),
                ("event_id like 'payment.%'", []),
            ]
            for (condition, parameters) in matches {
                let count = try await connection.query(
                    "select count(*) as n from points_ledger where user_id = $1::uuid and \(condition)",
                    [.uuid(user)] + parameters)
                XCTAssertEqual(try count.first!.int64("n"), 1, condition)
            }
            // Put the account back, so the ledger invariants hold after the test.
            try await connection.query(
                """
                update user_points set balance = balance - $2::bigint, lifetime_earned = lifetime_earned - $2::bigint where user_id = $1::uuid
                """, [.uuid(user), .int64(5)])
            try await connection.query(
                "delete from credit_lots where user_id = $1::uuid and source_event_id like 'adjust.domains:%'",
                [.uuid(user)])
        }
    }

    /// The user's account, ledger, lots and movements, as text, and the balance.
    private struct Snapshot: Equatable {
        var rows: [String]
        var balance: Int64
    }

    private func snapshot(_ user: UUID) async throws -> Snapshot {
        try await store.pool.withConnection { connection in
            var rows: [String] = []
            for table in ["user_points", "points_ledger", "credit_lots", "lot_movements"] {
                rows += try await connection.query(
                    "select t::text as row from \(table) t where user_id = $1::uuid order by 1", [.uuid(user)]
                )
                .map { try $0.string("row") }
            }
            rows += try await connection.query(
                "select t::text as row from register_bonus_claims t where first_user_id_snapshot = $1::uuid",
                [.uuid(user)]
            ).map { try $0.string("row") }
            let balance = try await connection.query(
                "select balance from user_points where user_id = $1::uuid", [.uuid(user)]
            ).first!.int64("balance")
            return Snapshot(rows: rows, balance: balance)
        }
    }

    /// `statement` must fail with check_violation naming `constraint`.
    private func expectRefusal(
        by constraint: String, _ what: String,
        _ statement: @escaping @Sendable (PostgresConnection) async throws -> Void,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        do {
            try await store.pool.withConnection { try await statement($0) }
            XCTFail("accepted: \(what)", file: file, line: line)
        } catch let error as PostgresError {
            XCTAssertEqual(error.sqlState, "23514", "\(what): \(error)", file: file, line: line)
            XCTAssertTrue(
                error.message.contains("\"\(constraint)\""), "\(what): \(error.message)", file: file, line: line)
        }
    }
}
