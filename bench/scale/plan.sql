-- The prefill's plan, created the same way in both bench databases (psql
-- variables: users, purchases, ledger_rows, base = the prefill's "now" as
-- UNIX seconds), so the payments rows and the points ledger agree without a
-- cross-database query. Everything is a deterministic function of the
-- purchase number p (1..purchases) and the user number: scale_h(n, salt) is a
-- hash in [0, 1). The helpers (scale_*) are dropped when the prefill ends.
set jit = off;
drop view if exists scale_purchases;
drop table if exists scale_users, scale_meta;
drop function if exists scale_h(bigint, bigint);

create function scale_h(n bigint, salt bigint) returns double precision
    language sql immutable parallel safe
    as $$ select (hashint8extended(n, salt) & 2147483647)::double precision / 2147483648 $$;

create unlogged table scale_meta (base timestamptz not null, granted bigint, spends bigint);
insert into scale_meta (base) values (to_timestamp(:base));

-- Users: a weight each (a long tail, and ten heavy buyers), purchases
-- 1..purchases dealt out in user order, so a user's purchases are the
-- numbers first_p .. first_p + n - 1. A user dealt none does not exist.
create unlogged table scale_users as
with weighted as (
    select u, 1 + 30 * power(scale_h(u, 11), 6) + case when u <= 10 then 500 else 0 end as w
    from generate_series(1, :users) as u
), dealt as (
    select u, floor(:purchases * (sum(w) over (order by u) - w) / sum(w) over ())::bigint as before,
              floor(:purchases * sum(w) over (order by u) / sum(w) over ())::bigint as upto
    from weighted
)
select u as user_no, md5('scale-user:' || u)::uuid as user_id, before + 1 as first_p, (upto - before)::int as n,
       -- First purchase within the first year of the two the data spans; the
       -- others spread evenly up to a day before base.
       interval '365 days' * scale_h(u, 12) as first_offset, 0::bigint as granted_before
from dealt where upto > before;
alter table scale_users add primary key (user_no);

-- One row per purchase: what it bought and where it ended. Kinds: granted
-- (credited, 97 %), refunded (credited, then clawed back in full, 3 %),
-- pending (the grant still owed to the saga worker: a user's newest
-- purchase, minutes old, 2.5 % of them).
create view scale_purchases as
select u.user_no, u.user_id, p, (200000000000000 + p)::text as transaction_id,
       md5('scale-purchase:' || p)::uuid as payment_id, k.kind, pack.code as product_code,
       'com.meeyao.qianwen.' || pack.code as app_store_product_id, pack.credits * q.quantity as credits,
       pack.credits as package_credits, q.quantity, pack.price * q.quantity as price_milliunits,
       case when k.kind = 'pending' then m.base - interval '10 minutes' * scale_h(p, 4)
            else m.base - interval '730 days' + u.first_offset
                 + (interval '729 days' - u.first_offset) * ((p - u.first_p)::double precision / u.n) end as purchased_at,
       (interval '729 days' - u.first_offset) / u.n as gap,
       case when scale_h(p, 13) < 0.02 then 'Sandbox' else 'Production' end as environment
from scale_users u
cross join scale_meta m
cross join lateral generate_series(u.first_p, u.first_p + u.n - 1) as p
cross join lateral (select case when p = u.first_p + u.n - 1 and scale_h(p, 3) < 0.025 then 'pending'
                                when scale_h(p, 3) >= 0.97 then 'refunded' else 'granted' end as kind) k
cross join lateral (select case when scale_h(p, 2) < 0.02 then 2 else 1 end as quantity) q
cross join lateral (select * from (values ('starter_pack', 100, 1990), ('popular_pack', 210, 3990), ('premium_pack', 415, 7990))
                        as pack(code, credits, price)
                    where code = case when scale_h(p, 1) < 0.5 then 'starter_pack'
                                      when scale_h(p, 1) < 0.85 then 'popular_pack' else 'premium_pack' end) pack;

-- Spends: the ledger rows left after the purchase and refund rows, dealt to
-- the granted purchases in order (granted_before: how many come before a
-- user's first purchase), so the ledger holds exactly ledger_rows rows.
with per_user as (
    select user_no, count(*) filter (where kind = 'granted') as granted from scale_purchases group by user_no
), ranked as (
    select user_no, sum(granted) over (order by user_no) - granted as before from per_user
)
update scale_users u set granted_before = r.before from ranked r where r.user_no = u.user_no;
update scale_meta set
    granted = (select count(*) from scale_purchases where kind = 'granted'),
    spends = :ledger_rows - (select count(*) + count(*) filter (where kind = 'refunded') from scale_purchases where kind <> 'pending');
analyze scale_users;
analyze scale_meta;
select 'plan: users=' || (select count(*) from scale_users) || ' granted=' || granted || ' spends=' || spends from scale_meta;
