-- :rows rows of apple_iap_transactions, transaction ids 1000000001 up, in
-- the states the saga leaves (granted, a grant owed, clawed back), valid
-- under the rules before and after the check-domains migration; the
-- signed JWS about as long as Apple's (2.6 KB).
insert into apple_iap_transactions (id, user_id, product_code, app_store_product_id, transaction_id, original_transaction_id,
    environment, bundle_id, purchase_date, status, credits, currency, price_milliunits, ledger_event_id, signed_transaction_info,
    apple_payload, email_hash, email_masked, pending_action, next_attempt_at, quantity, claimed, verdict_signed_at, grant_state,
    clawback_cycle, cycle_phase, cycle_amount, cycle_reason, cycle_deducted, overdue_amount, revoked, revocation_percentage)
select gen_random_uuid(), gen_random_uuid(), 'starter_pack', 'com.meeyao.qianwen.starter_pack', (1000000000 + g)::text,
       (1000000000 + g)::text, case when g % 2 = 0 then 'Production' else 'Sandbox' end, 'com.meeyao.qianwen',
       now() - interval '1 day', case g % 3 when 0 then 'granted' when 1 then 'verified' else 'refunded' end,
       100, 'USD', 990, case when g % 3 <> 1 then 'payment.apple_iap:' || g end,
       repeat(md5(g::text), 80), jsonb_build_object('transactionId', g::text, 'quantity', 1, 'type', 'Consumable'),
       md5(g::text) || md5(g::text), 'a***@example.com',
       case when g % 3 = 1 then 'grant' end, case when g % 3 = 1 then now() + interval '1 hour' end,
       1, true, now(), case when g % 3 = 1 then 'owed' else 'applied' end,
       case when g % 3 = 2 then 1 else 0 end, case when g % 3 = 2 then 'clawed_back' end,
       case when g % 3 = 2 then 100 else 0 end, case when g % 3 = 2 then '0' end, case when g % 3 = 2 then 90 else 0 end,
       case when g % 3 = 2 then 10 else 0 end, g % 3 = 2, case when g % 3 = 2 then 100000 end
from generate_series(1, :rows) g;
