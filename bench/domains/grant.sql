-- (c) A purchase's grant: GrantStatement.sql (account upsert, purchase
-- row, credit lot) for a new user per run, as the store binds it.
\set u random(1, 4000000000000)
with account as (
    insert into user_points as account (user_id, balance, lifetime_earned) values (md5(:u::text)::uuid, 100::bigint, 100::bigint)
    on conflict (user_id) do update
        set balance = account.balance + 100::bigint, lifetime_earned = account.lifetime_earned + 100::bigint, updated_at = now()
        where account.balance <= 1000000000000::bigint - 100::bigint and account.lifetime_earned <= 1000000000000::bigint - 100::bigint
    returning balance
), entry as (
    insert into points_ledger (user_id, event_id, change_type, direction, amount, balance_after, biz_type, biz_id,
                               request_fingerprint, metadata)
    select md5(:u::text)::uuid, 'payment.apple_iap:' || :u, 'purchase', 1, 100::bigint, account.balance, 'payment',
           'apple_iap:' || :u, repeat('f', 64), '{"ext":{"product_code":"starter_pack","quantity":1}}'::jsonb from account
    returning id, balance_after
), lot as (
    insert into credit_lots (user_id, source_event_id, credited, remaining)
    select md5(:u::text)::uuid, 'payment.apple_iap:' || :u, 100::bigint, 100::bigint from entry
)
select id, balance_after from entry;
