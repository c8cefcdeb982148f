import PostgresClient

/// A spend's whole write as ONE statement, after the account is locked and
/// the shares are decided (`CreditLots.take`): take the shares from the
/// lots (counting them as spent), record them as the spend's movements,
/// write the consume row and the account's new balance and lifetime_spent.
/// A data-modifying CTE runs each part exactly once.
enum SpendStatement {
    static let sql = """
        with shares as (select * from jsonb_to_recordset($8::jsonb) as s(source_event_id text, amount bigint)),
             moved as (
                 update credit_lots lot set remaining = lot.remaining - s.amount, spent = lot.spent + s.amount
                 from shares s where lot.user_id = $1::uuid and lot.source_event_id = s.source_event_id),
             recorded as (
                 insert into lot_movements (event_id, source_event_id, user_id, amount)
                 select $2, source_event_id, $1::uuid, amount from shares),
             entry as (
                 insert into points_ledger (user_id, event_id, change_type, direction, amount, balance_after, biz_type, biz_id,
                                            request_fingerprint, metadata)
                 values ($1::uuid, $2, 'consume', -1, $3::bigint, $4::bigint, $5, nullif($6, ''), $7, $9::jsonb)
                 returning id),
             account as (
                 update user_points set balance = $4::bigint, lifetime_spent = $10::bigint, updated_at = now()
                 where user_id = $1::uuid)
        select id from entry
        """

    static func parameters(_ spend: ValidatedSpend, shares: [LotShare], balanceAfter: Int64, lifetimeSpentAfter: Int64) -> [PostgresValue] {
        [.uuid(spend.userId), .text(spend.eventId), .int64(spend.amount), .int64(balanceAfter), .text(spend.bizType), .text(spend.bizId),
         .text(spend.fingerprint), .json(CreditLotLedger.json(shares)), .json(LedgerMetadata.spend(spend, attributions: shares)),
         .int64(lifetimeSpentAfter)]
    }
}
