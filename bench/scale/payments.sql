-- One batch of the payments prefill: the apple_iap_transactions rows of
-- users lo..hi (psql variables) in the final states PaymentsService leaves
-- (see PaymentsStore.write): granted (grant applied), refunded (clawed back
-- in full: cycle 1 clawed_back), or a grant still owed to the saga worker,
-- its next attempt scheduled two to three hours after base (so the worker
-- finds none due while the benchmark runs; the plan of its scan is what
-- counts). signed_transaction_info is a JWS-sized text (about 2.6 KB, the
-- certificate chain header alike for all, as Apple's is); apple_payload the
-- decoded payload. Plus a consumption answer for a third of the refunded
-- purchases (one per hundred purchases): mostly sent, some expired, 2 %
-- still pending but not yet due.
begin;
-- The planner overestimates generate_series rows a lot: JIT would compile for nothing.
set local jit = off;
-- Sorts and hashes of one batch in memory (one session per database).
set local work_mem = '256MB';
insert into apple_iap_transactions (
    id, user_id, product_code, app_store_product_id, transaction_id, original_transaction_id, environment, bundle_id,
    purchase_date, revocation_date, revocation_reason, status, credits, currency, price_milliunits, ledger_event_id,
    signed_transaction_info, apple_payload, email_hash, email_masked, revoked, pending_action, attempt_count,
    next_attempt_at, last_error, created_at, updated_at, quantity, claimed, verdict_signed_at, grant_state,
    clawback_cycle, cycle_phase, cycle_amount, cycle_reason, cycle_deducted, owed_since)
select sp.payment_id, sp.user_id, sp.product_code, sp.app_store_product_id, sp.transaction_id, sp.transaction_id,
       sp.environment, 'com.meeyao.qianwen', sp.purchased_at,
       case when refunded then sp.purchased_at + interval '2 hours' end, case when refunded then '0' end,
       case sp.kind when 'granted' then 'granted' when 'refunded' then 'refunded' else 'verified' end,
       sp.credits, 'USD', sp.price_milliunits,
       case when sp.kind <> 'pending' then 'payment.apple_iap:' || sp.transaction_id end,
       header.text || '.' || translate(encode(convert_to(payload.text, 'UTF8'), 'base64'), E'+/=\n', '-_') || '.'
           || translate(encode(sha512(convert_to(sp.transaction_id, 'UTF8')), 'base64'), E'+/=\n', '-_'),
       payload.text::jsonb,
       encode(sha256(convert_to('scale-email:' || sp.user_no, 'UTF8')), 'hex'), 'u***@example.com', refunded,
       case when sp.kind = 'pending' then 'grant' end,
       case when sp.kind = 'pending' then 3 else 1 end,
       case when sp.kind = 'pending' then m.base + interval '2 hours' + interval '1 hour' * scale_h(sp.p, 5) end,
       case when sp.kind = 'pending' then 'DATABASE_UNAVAILABLE: points unavailable' end,
       sp.purchased_at + interval '3 seconds',
       case when refunded then sp.purchased_at + interval '2 hours' else sp.purchased_at + interval '3 seconds' end,
       sp.quantity, true, case when refunded then sp.purchased_at + interval '2 hours' else sp.purchased_at end,
       case when sp.kind = 'pending' then 'owed' else 'applied' end,
       case when refunded then 1 else 0 end, case when refunded then 'clawed_back' end,
       case when refunded then sp.credits else 0 end, case when refunded then '0' end,
       case when refunded then sp.credits else 0 end,
       case when sp.kind = 'pending' then sp.purchased_at end
from scale_purchases sp
cross join scale_meta m
cross join lateral (select sp.kind = 'refunded' as refunded) r
cross join lateral (select json_build_object(
        'transactionId', sp.transaction_id, 'originalTransactionId', sp.transaction_id, 'bundleId', 'com.meeyao.qianwen',
        'productId', sp.app_store_product_id, 'purchaseDate', (extract(epoch from sp.purchased_at) * 1000)::bigint,
        'quantity', sp.quantity, 'type', 'Consumable', 'inAppOwnershipType', 'PURCHASED', 'environment', sp.environment,
        'signedDate', (extract(epoch from sp.purchased_at) * 1000)::bigint + 1000, 'storefront', 'USA', 'currency', 'USD',
        'price', sp.price_milliunits)::text as text) payload
cross join (select translate(encode(string_agg(sha512(convert_to('scale-x5c:' || i, 'UTF8')), '' order by i), 'base64'),
                             E'+/=\n', '-_') as text
            from generate_series(1, 24) as i) header
where sp.user_no between :lo and :hi
order by sp.purchased_at;

insert into consumption_answers (notification_uuid, transaction_id, environment, status, deadline, next_attempt_at,
                                 attempts, body, apple_status, detail, created_at, sent_at)
select md5('scale-consumption:' || sp.p)::uuid, sp.transaction_id, sp.environment, a.status,
       case when a.status = 'pending' then m.base + interval '10 hours' else sp.purchased_at + interval '3 days 12 hours' end,
       case when a.status = 'pending' then m.base + interval '2 hours' else sp.purchased_at + interval '3 days 1 minute' end,
       case when a.status = 'pending' then 1 else 1 + (scale_h(sp.p, 7) * 3)::int end,
       case when a.status = 'sent' then jsonb_build_object('customerConsented', true, 'consumptionStatus', 2,
                                                          'deliveryStatus', 0, 'sampleContentProvided', false) end,
       case when a.status = 'sent' then 202 end, case when a.status = 'expired' then 'window passed' end,
       sp.purchased_at + interval '3 days', case when a.status = 'sent' then sp.purchased_at + interval '3 days 1 minute' end
from scale_purchases sp
cross join scale_meta m
cross join lateral (select case when scale_h(sp.p, 9) < 0.02 then 'pending' when scale_h(sp.p, 9) < 0.1 then 'expired'
                                else 'sent' end as status) a
where sp.user_no between :lo and :hi and sp.kind = 'refunded' and scale_h(sp.p, 10) < 0.33;
commit;
