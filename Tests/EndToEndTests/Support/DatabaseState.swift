import Contracts
import Foundation
import TestSupport
import RPCRuntime
import PostgresClient
import XCTest

/// One points_ledger row as the tests look at it.
struct LedgerRow: Sendable, Equatable {
    let eventId: String
    let changeType: String
    let direction: Int64
    let amount: Int64
}

/// What the two databases say, read directly with PostgresPool.
extension EndToEndSystem {
    /// apple_iap_transactions.status of a transaction, nil when no row exists.
    func paymentStatus(_ transactionId: String) async throws -> String? {
        try await paymentsDatabase.withConnection { connection in
            try await connection.query(
                "select status from apple_iap_transactions where transaction_id = $1", [.text(transactionId)]
            )
            .first?.string("status")
        }
    }

    /// (status, user_id, failure_code) of a transaction row.
    func paymentRow(_ transactionId: String) async throws -> (status: String, userId: String?, failureCode: String?)? {
        try await paymentsDatabase.withConnection { connection in
            guard
                let row = try await connection.query(
                    "select status, user_id::text as user_id, failure_code from apple_iap_transactions where transaction_id = $1",
                    [.text(transactionId)]
                ).first
            else { return nil }
            return (try row.string("status"), try row.optionalString("user_id"), try row.optionalString("failure_code"))
        }
    }

    /// Rows in this run's payments schema (transactions plus notifications).
    func paymentsRowCount() async throws -> Int64 {
        try await paymentsDatabase.withConnection { connection in
            try await connection.query(
                "select (select count(*) from apple_iap_transactions) + (select count(*) from apple_notifications) as n"
            ).first?.int64("n") ?? -1
        }
    }

    func notificationCount(_ notificationUUID: UUID) async throws -> Int64 {
        try await paymentsDatabase.withConnection { connection in
            try await connection.query(
                "select count(*) as n from apple_notifications where notification_uuid = $1", [.uuid(notificationUUID)]
            )
            .first?.int64("n") ?? -1
        }
    }

    /// The user's ledger, oldest first.
    func ledger(_ userId: UUID) async throws -> [LedgerRow] {
        try await pointsDatabase.withConnection { connection in
            try await connection.query(
                "select event_id, change_type, direction::bigint as direction, amount from points_ledger where user_id = $1 order by seq",
                [.uuid(userId)]
            ).map { row in
                LedgerRow(
                    eventId: try row.string("event_id"), changeType: try row.string("change_type"),
                    direction: try row.int64("direction"), amount: try row.int64("amount"))
            }
        }
    }

    /// user_points (balance, lifetime_earned), nil when the user has no row.
    func account(_ userId: UUID) async throws -> (balance: Int64, lifetimeEarned: Int64)? {
        try await pointsDatabase.withConnection { connection in
            guard
                let row = try await connection.query(
                    "select balance, lifetime_earned from user_points where user_id = $1", [.uuid(userId)]
                ).first
            else { return nil }
            return (try row.int64("balance"), try row.int64("lifetime_earned"))
        }
    }

    /// Rows touching this user in the points database (account, ledger, starter claims).
    func pointsRowCount(_ userId: UUID) async throws -> Int64 {
        try await pointsDatabase.withConnection { connection in
            try await connection.query(
                """
                select (select count(*) from user_points where user_id = $1)
                     + (select count(*) from points_ledger where user_id = $1)
                     + (select count(*) from register_bonus_claims where first_user_id_snapshot = $1) as n
                """, [.uuid(userId)]
            ).first?.int64("n") ?? -1
        }
    }

    /// has_purchased_starter_pack of the claim first made by `userId`.
    func starterClaim(firstUserId userId: UUID) async throws -> Bool? {
        try await pointsDatabase.withConnection { connection in
            try await connection.query(
                "select has_purchased_starter_pack from register_bonus_claims where first_user_id_snapshot = $1",
                [.uuid(userId)]
            ).first?.bool("has_purchased_starter_pack")
        }
    }

    /// The chat service's spend: Points.Spend over gRPC with mTLS, as the
    /// chat service calls it (its certificate names it "chat", which
    /// POINTS_SPEND_CALLERS allows).
    func spend(_ userId: UUID, amount: Int64) async throws {
        let pki = caDirectory + "/internal"
        let tls = TLSConfiguration.client(
            trustRootsPath: pki + "/ca.pem", serverName: "points",
            certificateChainPath: pki + "/chat.pem", privateKeyPath: pki + "/chat.key")
        let client = try RPCClient(
            targets: [HostAndPort(host: "127.0.0.1", port: points.port)], configuration: .init(tls: tls))
        var request = SpendRequest()
        request.eventId = "chat.e2e:\(UUID().uuidString)"
        request.userId = userId.uuidString.lowercased()
        request.amount = amount
        request.bizType = "chat"
        request.bizId = UUID().uuidString
        do {
            _ = try await client.call(PointsMethods.spend, request, timeout: .seconds(10))
        } catch {
            await client.close()
            throw error
        }
        await client.close()
    }

    /// The ledger invariants (`LedgerInvariants`): balance == signed ledger
    /// sum, lifetime figures, and the credit lots.
    func assertBalanceMatchesLedger(_ userId: UUID, file: StaticString = #filePath, line: UInt = #line) async throws {
        let violations = try await LedgerInvariants.violations(pool: pointsDatabase, user: userId)
        XCTAssertEqual(violations, [], file: file, line: line)
    }

    /// Polls (bounded) until `condition` holds; false when it never did.
    func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<EndToEndLimits.settleAttemptsMax {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(EndToEndLimits.pollPauseMilliseconds))
        }
        return false
    }
}
