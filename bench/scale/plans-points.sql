-- The plans of PointsService's reads on the prefilled points database, with
-- the code's statements (PointsStore, StoredLedgerEvent, CreditLotLedger):
-- the balance (GET balance), the ledger listing (first page of 50 + 1 and
-- a page further back) for the heavy user, an event lookup (every grant's
-- replay check), a purchase's refund history and a user's open lots (every
-- clawback and spend). psql variables: heavy_user, event_id, purchase_event_id.
\pset pager off
\echo '### getBalance (GET /api/v1/points/balance)'
explain (analyze, buffers, costs off, timing off)
select balance, lifetime_earned, lifetime_spent from user_points where user_id = :'heavy_user'::uuid;
\echo '### getBalances (GET /api/v1/points/balance under load: 16 users in one call)'
select '{' || string_agg(user_id::text, ',') || '}' as batch_users
from (select user_id from user_points order by user_id limit 16) some_users \gset
explain (analyze, buffers, costs off, timing off)
select user_id, balance, lifetime_earned, lifetime_spent from user_points where user_id = any(:'batch_users'::uuid[]);
\echo '### listLedger (the heavy user, first page)'
explain (analyze, buffers, costs off, timing off)
select id, seq, event_id, change_type, direction, amount, balance_after, biz_type,
       coalesce(biz_id, '') as biz_id, metadata::text as metadata,
       (extract(epoch from created_at) * 1000)::bigint as created_at_ms
from points_ledger
where user_id = :'heavy_user'::uuid and (null::bigint is null or seq < null::bigint)
order by seq desc limit 51;
\echo '### listLedger (the heavy user, a page 2000 rows back)'
-- coalesce: a user with fewer rows reads from the newest (psql would set an empty variable for a null).
select coalesce((select seq from points_ledger where user_id = :'heavy_user'::uuid order by seq desc offset 2000 limit 1), 9223372036854775807)
    as page_seq \gset
explain (analyze, buffers, costs off, timing off)
select id, seq, event_id, change_type, direction, amount, balance_after, biz_type,
       coalesce(biz_id, '') as biz_id, metadata::text as metadata,
       (extract(epoch from created_at) * 1000)::bigint as created_at_ms
from points_ledger
where user_id = :'heavy_user'::uuid and (:page_seq::bigint is null or seq < :page_seq::bigint)
order by seq desc limit 51;
\echo '### findEvent (replay check of every grant, clawback, spend)'
explain (analyze, buffers, costs off, timing off)
select id, user_id, change_type, amount, balance_after, request_fingerprint, biz_type, coalesce(biz_id, '') as biz_id,
       case when change_type = 'refund' then coalesce((metadata -> 'ext' ->> 'overdue_amount')::bigint, 0) else 0 end
           as overdue_amount
from points_ledger where event_id = :'event_id';
\echo '### refundHistory (every clawback)'
explain (analyze, buffers, costs off, timing off)
select count(*) as refunds,
       count(*) filter (where not exists (
           select 1 from points_ledger reversal
           where reversal.change_type = 'refund_reversal' and reversal.related_event_id = refund.event_id)) as unreversed
from points_ledger refund
where refund.change_type = 'refund' and refund.related_event_id = :'purchase_event_id';
\echo '### openLots (every clawback, adjustment, healing spend)'
explain (analyze, buffers, costs off, timing off)
select source_event_id, remaining from credit_lots
where user_id = :'heavy_user'::uuid and remaining > 0 order by seq;
\echo '### the open lots a spend reads (points_spend, points_spend_many; points migration 11: the partial index on open)'
explain (analyze, buffers, costs off, timing off)
select lot.source_event_id, lot.remaining from credit_lots lot
where lot.user_id = :'heavy_user'::uuid and lot.open order by lot.seq;
