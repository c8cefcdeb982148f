import Foundation
import PostgresClient

/// The fields of a stored ledger row that replay and reference checks need.
struct StoredLedgerEvent: Sendable {
    let id: UUID
    let userId: UUID
    let changeType: String
    let amount: Int64
    let balanceAfter: Int64
    let fingerprint: String
    /// metadata.ext.overdue_amount of a refund row, 0 otherwise. Read for
    /// refund rows only: a spend keeps its caller's metadata under the same
    /// `ext` key, and a caller's `"overdue_amount": "n/a"` must not make the
    /// spend's row unreadable (it could then be neither replayed nor reversed).
    let overdueAmount: Int64
    /// metadata.ext.overdue_settled of a spend reversal's row (what it gave
    /// to an owed clawback instead of the user, `OverdueSettlement`), 0
    /// otherwise. That row's metadata is the store's own, never a caller's.
    let overdueSettled: Int64
    /// metadata.ext.spent_attributed of a refund row: what its clawback
    /// took from other lots as their spent credits (`CreditLots.spentElsewhere`), 0 otherwise.
    let spentAttributed: Int64
    let bizType: String
    let bizId: String
    /// The purchase a refund takes back, the refund a reversal undoes, ...; "" when none.
    let relatedEventId: String

    static let selectSQL = """
        select id, user_id, change_type, amount, balance_after, request_fingerprint, biz_type, coalesce(biz_id, '') as biz_id,
               coalesce(related_event_id, '') as related_event_id,
               case when change_type = 'refund' then coalesce((metadata -> 'ext' ->> 'overdue_amount')::bigint, 0) else 0 end
                   as overdue_amount,
               case when change_type = 'consume_reversal' then coalesce((metadata -> 'ext' ->> 'overdue_settled')::bigint, 0) else 0 end
                   as overdue_settled,
               case when change_type = 'refund' then coalesce((metadata -> 'ext' ->> 'spent_attributed')::bigint, 0) else 0 end
                   as spent_attributed
        from points_ledger where event_id = $1
        """

    init(row: PostgresRow) throws(PostgresError) {
        id = try row.uuid("id")
        userId = try row.uuid("user_id")
        changeType = try row.string("change_type")
        amount = try row.int64("amount")
        balanceAfter = try row.int64("balance_after")
        fingerprint = try row.string("request_fingerprint")
        overdueAmount = try row.int64("overdue_amount")
        overdueSettled = try row.int64("overdue_settled")
        spentAttributed = try row.int64("spent_attributed")
        bizType = try row.string("biz_type")
        bizId = try row.string("biz_id")
        relatedEventId = try row.string("related_event_id")
    }
}
