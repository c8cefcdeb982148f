import Foundation
import PostgresClient

/// One points_ledger row as the tests look at it.
struct LedgerRow: Sendable, Equatable {
    let eventId: String
    let changeType: String
    let signedAmount: Int64
}

/// What the two databases say, read directly.
extension LiveGateway {
    func ledger(_ userId: UUID) async throws -> [LedgerRow] {
        try await pointsDatabase.withConnection { connection in
            try await connection.query(
                "select event_id, change_type, direction::bigint * amount as signed_amount from points_ledger where user_id = $1 order by seq",
                [.uuid(userId)]
            ).map { row in
                LedgerRow(
                    eventId: try row.string("event_id"), changeType: try row.string("change_type"),
                    signedAmount: try row.int64("signed_amount"))
            }
        }
    }

    func balance(_ userId: UUID) async throws -> Int64 {
        try await pointsDatabase.withConnection { connection in
            try await connection.query("select balance from user_points where user_id = $1", [.uuid(userId)]).first?
                .int64("balance") ?? 0
        }
    }

    /// apple_iap_transactions.status, nil when the backend never saw the transaction.
    func paymentStatus(_ transactionId: String) async throws -> String? {
        try await paymentsDatabase.withConnection { connection in
            try await connection.query(
                "select status from apple_iap_transactions where transaction_id = $1", [.text(transactionId)]
            )
            .first?.string("status")
        }
    }

    /// Polls (bounded) until `condition` holds.
    func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<LiveGatewayLimits.settleAttemptsMax {
            if try await condition() { return true }
            try await Task.sleep(nanoseconds: LiveGatewayLimits.pollPauseNanoseconds)
        }
        return try await condition()
    }
}
