-- The plans of PaymentsService's periodic scans and per-user reads on the
-- prefilled payments database, with the code's statements (PaymentsStore)
-- and its limits: the saga worker's claimDue (PaymentsLimits.workerBatchMax
-- 32, lease 30 s), the owed-steps metric, the reconciler's stuck-row sweep
-- (RECONCILE_STUCK_AFTER_SECONDS 3600, 180 days, 100 rows) and revoked
-- sweep (180 days, 200 users), the consumption answerer's two statements,
-- a user's transaction list and the reconciler's read of one user. Writes
-- run inside a transaction that is rolled back. psql variable: heavy_user
-- (a user with many purchases).
\pset pager off
\echo '### claimDue (saga worker, every poll)'
begin;
explain (analyze, buffers, costs off, timing off)
update apple_iap_transactions set
    attempt_count = attempt_count + 1,
    next_attempt_at = now() + make_interval(secs => 30000 / 1000.0)
where id in (select id from apple_iap_transactions
             where pending_action is not null and next_attempt_at <= now()
             order by next_attempt_at limit 32 for update skip locked);
rollback;
\echo '### owedSteps (saga backlog metric, every scrape)'
explain (analyze, buffers, costs off, timing off)
select pending_action,
       count(*) filter (where owed_since < now() - make_interval(secs => 900000 / 1000.0)) as stuck,
       coalesce(floor(extract(epoch from now() - min(owed_since)) * 1000), 0)::bigint as oldest_ms
from apple_iap_transactions where pending_action is not null group by pending_action;
\echo '### claimStuckRows (reconciler, stuck-row sweep)'
begin;
explain (analyze, buffers, costs off, timing off)
update apple_iap_transactions set apple_checked_at = now()
where id in (
    select id from apple_iap_transactions
    where ((pending_action is not null and owed_since < now() - make_interval(secs => 3600000 / 1000.0))
           or (status = 'received' and created_at < now() - make_interval(secs => 3600000 / 1000.0)))
      and environment in ('Production', 'Sandbox')
      and created_at > now() - make_interval(days => 180)
      and (apple_checked_at is null or apple_checked_at < now() - make_interval(secs => 3600000 / 1000.0))
    order by apple_checked_at nulls first, created_at
    limit 100 for update skip locked);
rollback;
\echo '### sweepAnchors (reconciler, revoked sweep: first batch of users)'
explain (analyze, buffers, costs off, timing off)
select distinct on (user_id, environment) user_id::text as user_id, environment, transaction_id
from apple_iap_transactions
where grant_state = 'applied' and environment in ('Production', 'Sandbox')
  and purchase_date > now() - make_interval(days => 180)
  and user_id in (
      select distinct user_id from apple_iap_transactions
      where grant_state = 'applied' and user_id > coalesce(null::uuid, '00000000-0000-0000-0000-000000000000'::uuid)
        and environment in ('Production', 'Sandbox')
        and purchase_date > now() - make_interval(days => 180)
      order by user_id limit 200)
order by user_id, environment, purchase_date desc, transaction_id;
\echo '### claimDueConsumptionAnswers (consumption answerer, every pass)'
begin;
explain (analyze, buffers, costs off, timing off)
update consumption_answers set status = 'expired', lease_until = null, detail = coalesce(detail, 'window passed')
where status = 'pending' and deadline <= now();
explain (analyze, buffers, costs off, timing off)
update consumption_answers a set lease_until = now() + make_interval(secs => 120), attempts = attempts + 1
from (select notification_uuid from consumption_answers
      where status = 'pending' and next_attempt_at <= now() and (lease_until is null or lease_until < now())
        and (null::uuid is null or notification_uuid = null::uuid)
      order by next_attempt_at limit 50 for update skip locked) due
where a.notification_uuid = due.notification_uuid;
rollback;
\echo '### listTransactions (GET transactions of the heavy user, first page of 20)'
explain (analyze, buffers, costs off, timing off)
select id, status, credits, created_at from apple_iap_transactions
where user_id = :'heavy_user'::uuid and claimed
  and (null::uuid is null or (created_at, id) < (select created_at, id from apple_iap_transactions where id = null::uuid))
order by created_at desc, id desc limit 21;
\echo '### transactions(ofUser:) (reconciler, the heavy user, up to 500)'
explain (analyze, buffers, costs off, timing off)
select id, status from apple_iap_transactions where user_id = :'heavy_user'::uuid
order by purchase_date desc, transaction_id limit 500;
