-- (b) Saga step 3 after a grant: PaymentsStore.stateUpdate's statement
-- (the state's columns and views, the schedule cleared, the row read
-- back) on one of the prefilled rows, by its transaction id.
\set tx random(1000000001, 1000000000 + :rows)
update apple_iap_transactions set
    status = 'granted'::text, pending_action = null::text, revoked = false, failure_code = null::text,
    grant_state = 'applied'::text, clawback_cycle = 0::integer, cycle_phase = null::text, cycle_amount = 0::bigint,
    cycle_reason = null::text, cycle_deducted = 0::bigint, overdue_amount = 0::bigint,
    verdict_signed_at = to_timestamp(1738645600000 / 1000.0),
    revocation_date = revocation_date, revocation_reason = revocation_reason, revocation_type = revocation_type,
    revocation_percentage = revocation_percentage,
    ledger_event_id = coalesce('payment.apple_iap:' || transaction_id, ledger_event_id),
    next_attempt_at = null, owed_since = null, attempt_count = 0, last_error = null, updated_at = now()
where transaction_id = :tx::text
returning id, user_id, product_code, app_store_product_id, transaction_id, original_transaction_id, environment,
    bundle_id, app_account_token, (extract(epoch from purchase_date) * 1000)::bigint as purchase_ms, quantity,
    (extract(epoch from revocation_date) * 1000)::bigint as revocation_ms, revocation_reason, revocation_type,
    revocation_percentage, revoked, (extract(epoch from verdict_signed_at) * 1000)::bigint as verdict_signed_ms,
    claimed, credits, grant_state, failure_code, clawback_cycle, cycle_phase, cycle_amount, cycle_reason, cycle_deducted,
    overdue_amount, currency, price_milliunits, ledger_event_id, email_hash, email_masked, attempt_count, last_error,
    (extract(epoch from created_at) * 1000)::bigint as created_ms, (extract(epoch from updated_at) * 1000)::bigint as updated_ms;
