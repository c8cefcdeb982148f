-- (a) Saga step 1 for a new transaction: PaymentsStore.insert's statement
-- (every column of a full row, a grant owed and leased to the inserter,
-- the row read back), with literals where the store binds a purchase's
-- values and a fresh transaction id per run.
\set tx random(1000000000000, 8999999999999999)
insert into apple_iap_transactions (
    id, user_id, product_code, app_store_product_id, transaction_id, original_transaction_id,
    web_order_line_item_id, environment, bundle_id, app_account_token, purchase_date, quantity,
    currency, price_milliunits, signed_transaction_info, apple_payload, email_hash, email_masked,
    status, pending_action, revoked, failure_code, claimed, credits, grant_state,
    clawback_cycle, cycle_phase, cycle_amount, cycle_reason, cycle_deducted, overdue_amount,
    verdict_signed_at, revocation_date, revocation_reason, revocation_type, revocation_percentage,
    ledger_event_id, next_attempt_at, owed_since)
values (gen_random_uuid(), gen_random_uuid(), 'starter_pack', 'com.meeyao.qianwen.starter_pack', :tx, :tx, null, 'Sandbox',
        'com.meeyao.qianwen', null, to_timestamp(1738645560000 / 1000.0), 1, 'USD', 990, repeat('eyJhbGciOiJFUzI1NiJ9', 130),
        '{"transactionId":"2000000812345678","quantity":1,"type":"Consumable"}'::jsonb, repeat('ab', 32), 'a***@example.com',
        'verified'::text, 'grant'::text, false, null::text, true, 100::bigint, 'owed'::text,
        0::integer, null::text, 0::bigint, null::text, 0::bigint, 0::bigint,
        to_timestamp(1738645600000 / 1000.0), null, null::text, null::text, null::integer,
        null::text, now() + make_interval(secs => 30), now())
on conflict (transaction_id) do nothing
returning id, user_id, product_code, app_store_product_id, transaction_id, original_transaction_id, environment,
    bundle_id, app_account_token, (extract(epoch from purchase_date) * 1000)::bigint as purchase_ms, quantity,
    (extract(epoch from revocation_date) * 1000)::bigint as revocation_ms, revocation_reason, revocation_type,
    revocation_percentage, revoked, (extract(epoch from verdict_signed_at) * 1000)::bigint as verdict_signed_ms,
    claimed, credits, grant_state, failure_code, clawback_cycle, cycle_phase, cycle_amount, cycle_reason, cycle_deducted,
    overdue_amount, currency, price_milliunits, ledger_event_id, email_hash, email_masked, attempt_count, last_error,
    (extract(epoch from created_at) * 1000)::bigint as created_ms, (extract(epoch from updated_at) * 1000)::bigint as updated_ms;
