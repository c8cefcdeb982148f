import Contracts
import Foundation
import PostgresClient
import RPCRuntime
import XCTest

/// What the tests read back from both databases, and the invariants every
/// test asserts at its end.
extension PaymentsCluster {
    /// One apple_iap_transactions row, as the tests need it.
    struct Row: Sendable {
        var id: String
        var userId: String?
        var status: String
        var pendingAction: String?
        var ledgerEventId: String?
        var failureCode: String?
        var overdueAmount: Int64
        var credits: Int64
    }

    func row(_ transactionId: String) async throws -> Row? {
        try await paymentsDatabase.withConnection { connection in
            guard let row = try await connection.query("""
                select id::text as id, user_id::text as user_id, status, pending_action, ledger_event_id, failure_code, overdue_amount, credits
                from apple_iap_transactions where transaction_id = $1
                """, [.text(transactionId)]).first else { return nil }
            return Row(id: try row.string("id"), userId: try row.optionalString("user_id"), status: try row.string("status"),
                       pendingAction: try row.optionalString("pending_action"), ledgerEventId: try row.optionalString("ledger_event_id"),
                       failureCode: try row.optionalString("failure_code"), overdueAmount: try row.int64("overdue_amount"),
                       credits: try row.int64("credits"))
        }
    }

    func status(_ transactionId: String) async throws -> String? { try await row(transactionId)?.status }

    /// Ledger rows of one event id (the points database makes event ids globally unique).
    func ledgerCount(event: String) async throws -> Int64 {
        try await pointsDatabase.withConnection {
            try await $0.query("select count(*) as n from points_ledger where event_id = $1", [.text(event)]).first!.int64("n")
        }
    }

    func purchaseRows(_ transactionId: String) async throws -> Int64 { try await ledgerCount(event: "payment.apple_iap:\(transactionId)") }
    func refundRows(_ transactionId: String) async throws -> Int64 { try await ledgerCount(event: "refund.apple_iap:\(transactionId)") }

    func ledgerRows(user: UUID) async throws -> Int64 {
        try await pointsDatabase.withConnection {
            try await $0.query("select count(*) as n from points_ledger where user_id = $1::uuid", [.uuid(user)]).first!.int64("n")
        }
    }

    func balance(_ user: UUID) async throws -> (balance: Int64, earned: Int64, spent: Int64) {
        try await pointsDatabase.withConnection {
            guard let row = try await $0.query("select balance, lifetime_earned, lifetime_spent from user_points where user_id = $1::uuid",
                                               [.uuid(user)]).first else { return (0, 0, 0) }
            return (try row.int64("balance"), try row.int64("lifetime_earned"), try row.int64("lifetime_spent"))
        }
    }

    /// The `metadata.ext` of one ledger row.
    func ledgerExt(event: String) async throws -> [String: Any] {
        let text = try await pointsDatabase.withConnection {
            try await $0.query("select (metadata -> 'ext')::text as ext from points_ledger where event_id = $1", [.text(event)]).first?.optionalString("ext")
        }
        guard let text, let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return [:] }
        return object
    }

    /// What the chat service does when a user spends: a consume row and the
    /// matching balance change, under the row lock.
    func spend(_ user: UUID, amount: Int64) async throws {
        try await pointsDatabase.withTransaction { tx in
            let balance = try await tx.query("select balance from user_points where user_id = $1::uuid for update", [.uuid(user)]).first!.int64("balance")
            precondition(balance >= amount, "test spends more than the balance")
            try await tx.query("""
                insert into points_ledger (user_id, event_id, change_type, direction, amount, balance_after, biz_type, biz_id, request_fingerprint)
                values ($1::uuid, $2, 'consume', -1, $3::bigint, $4::bigint, 'chat', 'session', '')
                """, [.uuid(user), .text("consume:\(UUID().uuidString)"), .int64(amount), .int64(balance - amount)])
            try await tx.query(
                "update user_points set balance = balance - $2::bigint, lifetime_spent = lifetime_spent + $2::bigint where user_id = $1::uuid",
                [.uuid(user), .int64(amount)])
        }
    }

    /// Polls `condition` every 50 ms until true or `timeout` passes.
    func eventually(timeout: Duration = .seconds(20), _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if (try? await condition()) == true { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try await condition()
    }

    /// Waits (bounded) until the row's status is `status` with nothing pending.
    func waitSettled(_ transactionId: String, status: String, timeout: Duration = .seconds(20)) async throws -> Bool {
        try await eventually(timeout: timeout) {
            let row = try await self.row(transactionId)
            return row?.status == status && row?.pendingAction == nil
        }
    }

    // MARK: Invariants

    /// For each user: balance == signed ledger sum, lifetime_earned == signed
    /// sum of non-consume rows, lifetime_spent == consume sum, balance >= 0.
    func assertPointsInvariants(users: [UUID], file: StaticString = #filePath, line: UInt = #line) async throws {
        for user in users {
            let sums = try await pointsDatabase.withConnection {
                try await $0.query("""
                    select coalesce(sum(direction * amount), 0)::bigint as total,
                           coalesce(sum(case when change_type = 'consume' then 0 else direction * amount end), 0)::bigint as earned,
                           coalesce(sum(case when change_type = 'consume' then amount else 0 end), 0)::bigint as spent
                    from points_ledger where user_id = $1::uuid
                    """, [.uuid(user)]).first!
            }
            let account = try await balance(user)
            XCTAssertEqual(account.balance, try sums.int64("total"), "balance == signed ledger sum for \(user)", file: file, line: line)
            XCTAssertEqual(account.earned, try sums.int64("earned"), "lifetime_earned for \(user)", file: file, line: line)
            XCTAssertEqual(account.spent, try sums.int64("spent"), "lifetime_spent for \(user)", file: file, line: line)
            XCTAssertGreaterThanOrEqual(account.balance, 0, file: file, line: line)
        }
    }

    /// The row is `granted` with its ledger event id, and the points
    /// database holds exactly one purchase/payment row for it, for `user`
    /// and the catalog's credits, linked to the row's id.
    func assertGrantedOnce(_ transactionId: String, user: UUID, productCode: String, file: StaticString = #filePath, line: UInt = #line) async throws {
        let row = try await self.row(transactionId)
        XCTAssertEqual(row?.status, "granted", "status of \(transactionId)", file: file, line: line)
        XCTAssertNil(row?.pendingAction, file: file, line: line)
        XCTAssertEqual(row?.userId, user.uuidString.lowercased(), file: file, line: line)
        XCTAssertEqual(row?.ledgerEventId, "payment.apple_iap:\(transactionId)", file: file, line: line)
        XCTAssertEqual(row?.credits, Self.credits[productCode], file: file, line: line)
        let rows = try await pointsDatabase.withConnection {
            try await $0.query("""
                select user_id::text as user_id, change_type, biz_type, biz_id, direction, amount from points_ledger where event_id = $1
                """, [.text("payment.apple_iap:\(transactionId)")])
        }
        XCTAssertEqual(rows.count, 1, "one purchase row for \(transactionId)", file: file, line: line)
        guard let ledger = rows.first else { return }
        XCTAssertEqual(try ledger.string("user_id"), user.uuidString.lowercased(), file: file, line: line)
        XCTAssertEqual(try ledger.string("change_type"), "purchase", file: file, line: line)
        XCTAssertEqual(try ledger.string("biz_type"), "payment", file: file, line: line)
        XCTAssertEqual(try ledger.optionalString("biz_id"), row?.id, "biz_id is the payment record id", file: file, line: line)
        XCTAssertEqual(try ledger.int64("direction"), 1, file: file, line: line)
        XCTAssertEqual(try ledger.int64("amount"), Self.credits[productCode], file: file, line: line)
        let refunds = try await refundRows(transactionId)
        XCTAssertEqual(refunds, 0, file: file, line: line)
    }

    /// Nothing was written for this transaction or user in either database.
    func assertNothingWritten(_ transactionId: String, user: UUID, file: StaticString = #filePath, line: UInt = #line) async throws {
        let row = try await self.row(transactionId)
        XCTAssertNil(row, "no apple_iap_transactions row for \(transactionId)", file: file, line: line)
        let purchases = try await purchaseRows(transactionId)
        XCTAssertEqual(purchases, 0, file: file, line: line)
        let rows = try await ledgerRows(user: user)
        XCTAssertEqual(rows, 0, "no ledger rows for the user", file: file, line: line)
    }
}

/// Runs `body`, expecting an RPC error with `code` and `reason`; returns it.
@discardableResult
func expectRPCError(
    _ code: RPCError.Code, reason: String?, file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> Void
) async -> RPCError? {
    do {
        try await body()
        XCTFail("expected \(code) \(reason ?? "")", file: file, line: line)
    } catch let error as RPCError {
        XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
        if let reason { XCTAssertEqual(ErrorReason.reason(of: error), reason, "\(error)", file: file, line: line) }
        return error
    } catch {
        XCTFail("unexpected \(error)", file: file, line: line)
    }
    return nil
}
