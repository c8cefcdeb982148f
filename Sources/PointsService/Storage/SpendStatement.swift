import PostgresClient
import StrictJSON

/// A spend's whole write as ONE statement, run right after the account row
/// is locked (so its snapshot sees every committed change of this user's
/// lots): take the credits from the open lots oldest first — the
/// attribution rule of `CreditLots.take`, here as a window over the lots so
/// the spend costs one round trip — record the shares as the spend's
/// movements, write the consume row (its metadata holding the caller's
/// object and the attribution) and the account's new figures. Data-modifying
/// CTEs run exactly once. Nothing is written unless the open lots add up to
/// the balance the lock read (`expected_balance`): the caller then heals the
/// lots (`CreditLotLedger.openLots`) and runs it again.
enum SpendStatement {
    static let sql = """
        with lots as (
                 select source_event_id, remaining, seq,
                        sum(remaining) over (order by seq) - remaining as before
                 from credit_lots where user_id = $1::uuid and remaining > 0),
             held as (select coalesce(sum(remaining), 0)::bigint as total from lots),
             shares as (
                 select lots.source_event_id, least(lots.remaining, $3::bigint - lots.before) as amount, lots.seq
                 from lots, held where lots.before < $3::bigint and held.total = $9::bigint),
             moved as (
                 update credit_lots lot set remaining = lot.remaining - s.amount, spent = lot.spent + s.amount
                 from shares s where lot.user_id = $1::uuid and lot.source_event_id = s.source_event_id),
             recorded as (
                 insert into lot_movements (event_id, source_event_id, user_id, amount)
                 select $2, source_event_id, $1::uuid, amount from shares),
             attribution as (
                 select coalesce(jsonb_agg(jsonb_build_object('source_event_id', source_event_id, 'amount', amount) order by seq),
                                 '[]'::jsonb) as list
                 from shares),
             entry as (
                 insert into points_ledger (user_id, event_id, change_type, direction, amount, balance_after, biz_type, biz_id,
                                            request_fingerprint, metadata)
                 select $1::uuid, $2, 'consume', -1, $3::bigint, $9::bigint - $3::bigint, $4, nullif($5, ''), $6,
                        jsonb_build_object('ext', $7::jsonb, 'attribution', attribution.list)
                 from held, attribution where held.total = $9::bigint
                 returning id),
             account as (
                 update user_points set balance = $9::bigint - $3::bigint, lifetime_spent = $8::bigint, updated_at = now()
                 where user_id = $1::uuid and exists (select 1 from entry))
        select (select id from entry) as id, (select total from held) as held, (select list from attribution)::text as attribution
        """

    static func parameters(_ spend: ValidatedSpend, balance: Int64, lifetimeSpentAfter: Int64) -> [PostgresValue] {
        [.uuid(spend.userId), .text(spend.eventId), .int64(spend.amount), .text(spend.bizType), .text(spend.bizId), .text(spend.fingerprint),
         .json(JSONWriter.string(of: spend.metadata ?? .object(JSONObject()))), .int64(lifetimeSpentAfter), .int64(balance)]
    }
}
