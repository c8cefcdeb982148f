-- One batch of the points prefill: the ledger of users lo..hi (psql
-- variables) as PointsService would have written it, in one transaction.
-- Per user, in order: each credited purchase (a `purchase` row and its
-- credit lot), a refunded one's full clawback right after it (a `refund`
-- row taking the whole lot back, so it never overdraws), then that
-- purchase's spends (`consume` rows, biz_type chat) taking at most what it
-- credited, oldest lots first, each recorded in lot_movements and in its
-- metadata's attribution as points_spend does. The invariants the tests
-- check hold: balance = signed ledger sum = the lots' remaining,
-- balance_after is the running sum in seq order, lifetime figures, one
-- clawback per purchase. Rows of the users of a batch are interleaved by
-- time (inserted in created_at order), as live traffic would leave them.
begin;
-- The planner overestimates generate_series rows a lot: JIT would compile for nothing.
set local jit = off;
-- Sorts and hashes of one batch in memory (one session per database).
set local work_mem = '256MB';
-- Bulk load: the foreign keys' per-row triggers are skipped (user_points rows
-- come first; check.sql proves every row has its account afterwards).
set local session_replication_role = replica;
create temp table batch_purchases on commit drop as
select sp.*, case when sp.kind = 'granted'
                  then (floor(m.spends::numeric * (sp.rank + 1) / m.granted) - floor(m.spends::numeric * sp.rank / m.granted))::int
                  else 0 end as spends
from (select sp.*, u.granted_before + row_number() over (partition by sp.user_no, sp.kind = 'granted' order by sp.p) - 1 as rank
      from scale_purchases sp join scale_users u using (user_no)
      where sp.user_no between :lo and :hi and sp.kind <> 'pending') sp
cross join scale_meta m;

-- Every ledger event of the batch, with its place in the user's history (p, j).
create temp table batch_events on commit drop as
with raw as (
    select user_no, user_id, p, 0 as j, 'purchase' as change_type, 'payment.apple_iap:' || transaction_id as event_id,
           credits as amount, 1 as direction, purchased_at as created_at, kind, credits as lot_credits
    from batch_purchases
    union all
    select user_no, user_id, p, 1, 'refund', 'refund.apple_iap:' || transaction_id, credits, -1,
           purchased_at + interval '2 hours', kind, 0
    from batch_purchases where kind = 'refunded'
    union all
    select b.user_no, b.user_id, b.p, 1 + j, 'consume', 'chat.message:' || md5('scale-spend:' || b.p || ':' || j)::uuid,
           floor(t.total::numeric * j / b.spends) - floor(t.total::numeric * (j - 1) / b.spends), -1,
           b.purchased_at + b.gap * (j::double precision / (b.spends + 1)), b.kind, 0
    from batch_purchases b
    cross join lateral (select greatest(b.spends, floor(b.credits * (0.5 + 0.5 * scale_h(b.p, 8))))::bigint as total) t
    cross join lateral generate_series(1, b.spends) as j
)
select raw.*,
       sum(direction * amount) over (partition by user_no order by p, j) as balance_after,
       -- FIFO: a credited lot holds [lot_start, lot_start + lot_credits) of the
       -- user's credits in lot order; a spend takes [spend_start, spend_start + amount).
       sum(case when kind = 'granted' then lot_credits else 0 end) over (partition by user_no order by p, j)
           - case when kind = 'granted' then lot_credits else 0 end as lot_start,
       sum(case when change_type = 'consume' then amount else 0 end) over (partition by user_no order by p, j)
           - case when change_type = 'consume' then amount else 0 end as spend_start
from raw;
create index on batch_events (user_no) where change_type = 'purchase' and kind = 'granted';
analyze batch_events;

-- Which lot each spend took from (the overlaps), and each clawback's whole lot.
create temp table batch_movements on commit drop as
select s.event_id, l.event_id as source_event_id, s.user_id, l.p as lot_p,
       least(l.lot_start + l.lot_credits, s.spend_start + s.amount) - greatest(l.lot_start, s.spend_start) as amount
from batch_events s
join batch_events l on l.user_no = s.user_no and l.change_type = 'purchase' and l.kind = 'granted'
                   and l.lot_start < s.spend_start + s.amount and s.spend_start < l.lot_start + l.lot_credits
where s.change_type = 'consume'
union all
select r.event_id, 'payment.apple_iap:' || substr(r.event_id, length('refund.apple_iap:') + 1), r.user_id, r.p, r.amount
from batch_events r where r.change_type = 'refund';
analyze batch_purchases, batch_movements;

insert into user_points (user_id, balance, lifetime_earned, lifetime_spent, created_at, updated_at)
select user_id, sum(direction * amount), sum(direction * amount) filter (where change_type <> 'consume'),
       coalesce(sum(amount) filter (where change_type = 'consume'), 0), min(created_at), max(created_at)
from batch_events group by user_id;

insert into credit_lots (user_id, source_event_id, credited, remaining, spent, created_at)
select l.user_id, l.event_id, l.amount, l.amount - coalesce(m.taken, 0), coalesce(m.spent, 0), l.created_at
from batch_events l
left join (select source_event_id, sum(amount) as taken, sum(amount) filter (where event_id like 'chat.%') as spent
           from batch_movements group by source_event_id) m on m.source_event_id = l.event_id
where l.change_type = 'purchase'
order by l.user_no, l.p;

insert into points_ledger (user_id, event_id, change_type, direction, amount, balance_after, biz_type, biz_id,
                           related_event_id, request_fingerprint, metadata, created_at)
select e.user_id, e.event_id, e.change_type, e.direction, e.amount, e.balance_after,
       case when e.change_type = 'consume' then 'chat' else 'payment' end,
       case when e.change_type = 'consume' then md5('scale-chat:' || e.user_no || ':' || e.p)::uuid::text else bp.payment_id::text end,
       case when e.change_type = 'refund' then 'payment.apple_iap:' || bp.transaction_id end,
       encode(sha256(convert_to(e.event_id, 'UTF8')), 'hex'),
       case e.change_type
           when 'purchase' then jsonb_build_object('ext', jsonb_build_object(
               'app_store_product_id', bp.app_store_product_id, 'apple_iap_transaction_id', bp.payment_id::text,
               'credits', bp.credits, 'environment', bp.environment, 'original_transaction_id', bp.transaction_id,
               'package_credits', bp.package_credits, 'platform', 'ios', 'product_code', bp.product_code,
               'quantity', bp.quantity, 'source', 'apple_iap', 'transaction_id', bp.transaction_id))
           when 'refund' then jsonb_build_object('ext', jsonb_build_object(
               'original_event_id', 'payment.apple_iap:' || bp.transaction_id, 'overdue_amount', 0,
               'purchase_credits', bp.credits, 'refund_cycle', 1, 'refund_reason', '0', 'requested_amount', bp.credits))
           else jsonb_build_object('ext', jsonb_build_object('model', 'chat-standard', 'tokens', 40 * e.amount),
                                   'attribution', a.list) end,
       e.created_at
from batch_events e
join batch_purchases bp on bp.p = e.p
left join (select event_id, jsonb_agg(jsonb_build_object('source_event_id', source_event_id, 'amount', amount) order by lot_p) as list
           from batch_movements where event_id like 'chat.%' group by event_id) a on a.event_id = e.event_id
order by e.created_at;

insert into lot_movements (event_id, source_event_id, user_id, amount)
select event_id, source_event_id, user_id, amount from batch_movements;
commit;
