import Foundation
import PostgresClient

/// The reads reconciliation needs: a user's transactions.
extension PaymentsStore {
    /// The user's transactions, newest first, at most `limit`.
    func transactions(ofUser userId: UUID, limit: Int) async throws(PaymentsError) -> [PaymentRecord] {
        try await mappingErrors {
            try await self.pool.withConnection { connection in
                try await connection.query(
                    """
                    select \(Self.columns) from apple_iap_transactions where user_id = $1::uuid
                    order by purchase_date desc, transaction_id limit $2::bigint
                    """, [.uuid(userId), .int64(Int64(limit))]
                ).map(Self.record)
            }
        }
    }
}
