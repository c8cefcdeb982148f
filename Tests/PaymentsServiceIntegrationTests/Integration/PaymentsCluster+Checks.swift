import Contracts
import Foundation
import PostgresClient
import RPCCore
import RPCRuntime
import TestSupport
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
            guard
                let row = try await connection.query(
                    """
                    select id::text as id, user_id::text as user_id, status, pending_action, ledger_event_id, failure_code, overdue_amount, credits
                    from apple_iap_transactions where transaction_id = $1
                    """, [.text(transactionId)]
                ).first
            else { return nil }
            return Row(
                id: try row.string("id"), userId: try row.optionalString("user_id"), status: try row.string("status"),
                pendingAction: try row.optionalString("pending_action"),
                ledgerEventId: try row.optionalString("ledger_event_id"),
                failureCode: try row.optionalString("failure_code"), overdueAmount: try row.int64("overdue_amount"),
                credits: try row.int64("credits"))
        }
    }

    func status(_ transactionId: String) async throws -> String? { try await row(transactionId)?.status }

    /// Ledger rows of one event id (the points database makes event ids globally unique).
    func ledgerCount(event: String) async throws -> Int64 {
        try await pointsDatabase.withConnection {
            try await $0.query("select count(*) as n from points_ledger where event_id = $1", [.text(event)]).first!
                .int64("n")
        }
    }

    func purchaseRows(_ transactionId: String) async throws -> Int64 {
        try await ledgerCount(event: "payment.apple_iap:\(transactionId)")
    }
    func refundRows(_ transactionId: String) async throws -> Int64 {
        try await ledgerCount(event: "refund.apple_iap:\(transactionId)")
    }

    func ledgerRows(user: UUID) async throws -> Int64 {
        try await pointsDatabase.withConnection {
            try await $0.query("select count(*) as n from points_ledger where user_id = $1::uuid", [.uuid(user)]).first!
                .int64("n")
        }
    }

    func balance(_ user: UUID) async throws -> (balance: Int64, earned: Int64, spent: Int64) {
        try await pointsDatabase.withConnection {
            guard
                let row = try await $0.query(
                    "select balance, lifetime_earned, lifetime_spent from user_points where user_id = $1::uuid",
                    [.uuid(user)]
                ).first
            else { return (0, 0, 0) }
            return (try row.int64("balance"), try row.int64("lifetime_earned"), try row.int64("lifetime_spent"))
        }
    }

    /// The `metadata.ext` of one ledger row.
    func ledgerExt(event: String) async throws -> [String: Any] {
        let text = try await pointsDatabase.withConnection {
            try await $0.query(
                "select (metadata -> 'ext')::text as ext from points_ledger where event_id = $1", [.text(event)]
            ).first?.optionalString("ext")
        }
        guard let text, let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            return [:]
        }
        return object
    }

    /// What the chat service does when a user spends: Points.Spend over gRPC.
    func spend(_ user: UUID, amount: Int64) async throws {
        let client = try RPCClient(targets: [HostAndPort(host: "127.0.0.1", port: points.port)])
        var request = SpendRequest()
        request.eventId = "chat.test:\(UUID().uuidString)"
        request.userId = user.uuidString.lowercased()
        request.amount = amount
        request.bizType = "chat"
        request.bizId = "session"
        do {
            _ = try await client.call(PointsMethods.spend, request, timeout: .seconds(10))
        } catch {
            await client.close()
            throw error
        }
        await client.close()
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

    /// For each user: the ledger invariants (`LedgerInvariants`).
    func assertPointsInvariants(users: [UUID], file: StaticString = #filePath, line: UInt = #line) async throws {
        for user in users {
            let violations = try await LedgerInvariants.violations(pool: pointsDatabase, user: user)
            XCTAssertEqual(violations, [], file: file, line: line)
        }
    }

    /// The row is `granted` with its ledger event id, and the points
    /// database holds exactly one purchase/payment row for it, for `user`
    /// and the catalog's credits, linked to the row's id.
    func assertGrantedOnce(
        _ transactionId: String, user: UUID, productCode: String, quantity: Int64 = 1,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        let credits = (Self.credits[productCode] ?? 0) * quantity
        let row = try await self.row(transactionId)
        XCTAssertEqual(row?.status, "granted", "status of \(transactionId)", file: file, line: line)
        XCTAssertNil(row?.pendingAction, file: file, line: line)
        XCTAssertEqual(row?.userId, user.uuidString.lowercased(), file: file, line: line)
        XCTAssertEqual(row?.ledgerEventId, "payment.apple_iap:\(transactionId)", file: file, line: line)
        XCTAssertEqual(row?.credits, credits, file: file, line: line)
        let rows = try await pointsDatabase.withConnection {
            try await $0.query(
                """
                select user_id::text as user_id, change_type, biz_type, biz_id, direction, amount from points_ledger where event_id = $1
                """, [.text("payment.apple_iap:\(transactionId)")])
        }
        XCTAssertEqual(rows.count, 1, "one purchase row for \(transactionId)", file: file, line: line)
        guard let ledger = rows.first else { return }
        XCTAssertEqual(try ledger.string("user_id"), user.uuidString.lowercased(), file: file, line: line)
        XCTAssertEqual(try ledger.string("change_type"), "purchase", file: file, line: line)
        XCTAssertEqual(try ledger.string("biz_type"), "payment", file: file, line: line)
        XCTAssertEqual(
            try ledger.optionalString("biz_id"), row?.id, "biz_id is the payment record id", file: file, line: line)
        XCTAssertEqual(try ledger.int64("direction"), 1, file: file, line: line)
        XCTAssertEqual(try ledger.int64("amount"), credits, file: file, line: line)
        let refunds = try await refundRows(transactionId)
        XCTAssertEqual(refunds, 0, file: file, line: line)
    }

    /// Nothing was written for this transaction or user in either database.
    func assertNothingWritten(_ transactionId: String, user: UUID, file: StaticString = #filePath, line: UInt = #line)
        async throws
    {
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
    _ code: RPCError.Code, reason: String?, file: StaticString = #filePath, line: UInt = #line,
    _ body: () async throws -> Void
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
