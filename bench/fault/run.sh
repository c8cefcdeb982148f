#!/usr/bin/env bash
# Fault test: the whole system survives losing any one process and the
# database, and credits money exactly once.
#
# On the private PostgreSQL cluster (scripts/pg.sh) it starts TWO instances
# each of PointsService, PaymentsService (each with its saga worker) and the
# Gateway on 127.0.0.1, every client given both addresses of what it calls
# (round-robin), all on mutual TLS (scripts/internal-pki.sh). FaultBench
# (bench/fault/swift) runs a bounded mix for SECONDS, round-robin over both
# gateways: distinct fresh purchases (verify), duplicates of earlier ones,
# spends of 1 credit over gRPC to either PointsService (as the spend caller
# "spend-caller") and signed REFUND notifications for credited purchases.
# Meanwhile this script SIGKILLs and restarts one PointsService, one
# PaymentsService and one gateway at staggered times and restarts
# PostgreSQL once. Then the driver resubmits what was answered "retry
# later" (as the app and Apple do; bounded), the workers drain (bounded),
# and the checks run against both databases:
#   - every purchase answered granted/already_granted or retryable (or not
#     answered) has exactly one purchase ledger row, for its user;
#   - no purchase row for a transaction the driver never submitted;
#   - every refund Apple got a 200 for is clawed back exactly once, and
#     nothing else is;
#   - every spend answered OK has one consume row, one refused as
#     INSUFFICIENT_CREDITS none, none applied twice, none left unanswered;
#   - every user's balance equals its ledger sum (and the lifetime figures),
#     and the credit lots add up to the balance;
#   - no saga stuck: no payment row owes a step or sits outside
#     granted/refunded/refunded_insufficient.
# Prints the counts and, on a violation, the failing rows; exits 1.
# The Apple API jobs stay off (there is no App Store Server API here); the
# saga worker, its leases and retries are what run. SAGA_LEASE_MS=10000.
#
# Usage: bench/fault/run.sh [seconds=60]
#   FAULT_MUTATE=balance          corrupt one balance before the checks (must exit 1)
#   FAULT_MUTATE=forget-purchase  the driver leaves one credited purchase out of its record (must exit 1)
# Bounded: the mix 10...300 s, settle <= 90 s, drain <= 60 s, every start
# and query has a timeout; about SECONDS + 60 s after the build.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
# The project's Debian packages and PostgreSQL (quick when all are there).
"$root/scripts/install-deps.sh" >&2
seconds="${1:-60}"
[[ "$seconds" =~ ^[0-9]+$ ]] && ((seconds >= 10 && seconds <= 300)) || { echo "seconds must be 10...300" >&2; exit 2; }
mutation="${FAULT_MUTATE:-}"
[[ "$mutation" =~ ^(|balance|forget-purchase)$ ]] || { echo "FAULT_MUTATE: balance or forget-purchase" >&2; exit 2; }
users=24
bundle_id="com.meeyao.qianwen"
for tool in psql python3 openssl; do command -v "$tool" >/dev/null || { echo "missing tool: $tool" >&2; exit 2; }; done

work="$(mktemp -d)"
source "$root/bench/lib/system.sh"
driver_pid=""
trap 'status=$?; [[ -n "$driver_pid" ]] && kill "$driver_pid" 2>/dev/null; bench_stop_all; rm -rf "$work"; ((status == 0)) || echo "bench/fault/run.sh: FAILED (exit $status)" >&2' EXIT

bench_build PointsService PaymentsService Gateway FaultBench
bench_pg_start
bench_recreate_databases fault_points fault_payments fault_check
db_url() { echo "postgresql://iap@127.0.0.1:$PG_PORT/$1"; }

"$root/scripts/internal-pki.sh" "$work/pki" points payments gateway spend-caller >/dev/null 2>&1
timeout 60 "$bin/FaultBench" init-ca --out "$work/apple"
pki="$work/pki"
declare -A port
for name in points_a points_b payments_a payments_b gateway_a gateway_b; do port[$name]="$(bench_free_port)"; done
points_addrs="127.0.0.1:${port[points_a]},127.0.0.1:${port[points_b]}"
payments_addrs="127.0.0.1:${port[payments_a]},127.0.0.1:${port[payments_b]}"
gateway_env=(JWT_HS256_SECRET="$(bench_random_secret)" JWT_ISSUER=iap-fault JWT_AUDIENCE=iap-fault-app
             EMAIL_HASH_SECRET="$(bench_random_secret)" POINTS_ADDR="$points_addrs" PAYMENTS_ADDR="$payments_addrs" LOG_LEVEL=warning
             INTERNAL_AUTH=mtls BACKEND_TLS_CA_FILE="$pki/ca.pem" BACKEND_TLS_CERT="$pki/gateway.pem" BACKEND_TLS_KEY="$pki/gateway.key")

# launch NAME: (re)starts one instance on its fixed port; sets pid[NAME].
declare -A pid
launch() {
  local name="$1" listen="127.0.0.1:${port[$1]}"
  case "$name" in
    points_*) bench_start "$name" PointsService DATABASE_URL="$(db_url fault_points)" LOG_LEVEL=warning \
                PACKAGES_FILE="$root/config/packages.json" LISTEN_ADDR="$listen" INTERNAL_AUTH=mtls \
                TLS_CERT="$pki/points.pem" TLS_KEY="$pki/points.key" TLS_CLIENT_CA="$pki/ca.pem" POINTS_SPEND_CALLERS=spend-caller ;;
    payments_*) bench_start "$name" PaymentsService DATABASE_URL="$(db_url fault_payments)" LOG_LEVEL=warning \
                POINTS_ADDR="$points_addrs" LISTEN_ADDR="$listen" APPLE_BUNDLE_ID="$bundle_id" APPLE_ENVIRONMENTS=Sandbox \
                APPLE_ROOT_CERTS="$work/apple/root.der" APPLE_ONLINE_CHECKS=0 INTERNAL_AUTH=mtls \
                TLS_CERT="$pki/payments.pem" TLS_KEY="$pki/payments.key" TLS_CLIENT_CA="$pki/ca.pem" POINTS_TLS_CA="$pki/ca.pem" \
                SAGA_POLL_INTERVAL_MS=200 SAGA_RETRY_INITIAL_MS=200 SAGA_RETRY_MAX_MS=2000 SAGA_LEASE_MS=10000 ;;
    gateway_*) bench_start "$name" Gateway "${gateway_env[@]}" LISTEN_ADDR="$listen" ;;
  esac
  pid[$name]="$started_pid"
}
for name in points_a points_b payments_a payments_b gateway_a gateway_b; do launch "$name"; done
bench_mint_users "$users" "$work/users.tsv" "${gateway_env[@]}"
echo "system up: 2 x PointsService ($points_addrs), 2 x PaymentsService ($payments_addrs)," \
     "2 x Gateway (127.0.0.1:${port[gateway_a]},127.0.0.1:${port[gateway_b]}), PostgreSQL on $PG_PORT; $users users"

mkdir -p "$work/out"
driver_args=(run --gateways "127.0.0.1:${port[gateway_a]},127.0.0.1:${port[gateway_b]}" --points "$points_addrs"
             --ca "$work/apple/ca.pem" --users "$work/users.tsv" --internal-ca "$pki" --out "$work/out"
             --seconds "$seconds" --settle-seconds 90 --bundle-id "$bundle_id")
[[ "$mutation" == forget-purchase ]] && driver_args+=(--mutate forget-purchase)
timeout $((seconds + 240)) "$bin/FaultBench" "${driver_args[@]}" > "$work/driver.out" 2> "$work/driver.err" &
driver_pid=$!
started_at=$SECONDS

# at FRACTION_PERCENT: sleeps until that share of the mix has passed.
at() { local due=$((started_at + seconds * $1 / 100)); while ((SECONDS < due)); do sleep 0.2; done; }
# fault NAME DOWN_PERCENT: SIGKILL NAME, restart it DOWN_PERCENT of the mix later.
fault() {
  local name="$1" victim="${pid[$1]}"
  kill -9 "$victim"; wait "$victim" 2>/dev/null || true
  echo "t=$((SECONDS - started_at))s SIGKILL $name (pid $victim)"
  local due=$((SECONDS + seconds * $2 / 100 + 1)); while ((SECONDS < due)); do sleep 0.2; done
  launch "$name"
  echo "t=$((SECONDS - started_at))s restarted $name (pid ${pid[$name]})"
}
at 10; fault points_a 8
at 28; fault payments_b 8
at 46; fault gateway_a 8
at 66
echo "t=$((SECONDS - started_at))s restarting PostgreSQL"
timeout 120 "$root/scripts/pg.sh" restart >/dev/null
echo "t=$((SECONDS - started_at))s PostgreSQL back"

driver_status=0
wait "$driver_pid" || driver_status=$?
driver_pid=""
cat "$work/driver.out"
[[ -s "$work/driver.err" ]] && { echo "driver stderr:"; head -c 2000 "$work/driver.err"; }
[[ -s "$work/out/purchases.tsv" ]] || { echo "the driver wrote no record (exit $driver_status)"; exit 1; }

# Drain: the saga workers finish every owed step (bounded).
owed=-1
for _ in $(seq 1 120); do
  owed="$(bench_sql fault_payments "select count(*) from apple_iap_transactions where pending_action is not null")"
  [[ "$owed" == 0 ]] && break
  sleep 0.5
done
echo "after drain: $owed payment rows still owe a step"

if [[ "$mutation" == balance ]]; then
  bench_sql fault_points "update user_points set balance = balance + 1 where user_id = (select min(user_id::text)::uuid from user_points)"
  echo "FAULT_MUTATE=balance: added 1 credit to one balance behind the ledger's back"
fi

# The driver's record and both services' rows side by side in fault_check.
copy_into() { # DB QUERY TABLE
  timeout 60 "${psql_admin[@]}" -d "$1" -c "\\copy ($2) to stdout" \
    | timeout 60 "${psql_admin[@]}" -d fault_check -c "\\copy $3 from stdin"
}
bench_sql fault_check "
  create table sent_purchases (transaction_id text primary key, user_id uuid, outcome text, refund text, answers text);
  create table sent_spends (event_id text primary key, user_id uuid, outcome text, answers text);
  create table ledger (event_id text, change_type text, related_event_id text, user_id uuid, amount bigint, direction int);
  create table payments (transaction_id text, user_id uuid, status text, pending_action text, overdue_amount bigint);"
timeout 60 "${psql_admin[@]}" -d fault_check -c "\\copy sent_purchases from '$work/out/purchases.tsv'"
timeout 60 "${psql_admin[@]}" -d fault_check -c "\\copy sent_spends from '$work/out/spends.tsv'"
copy_into fault_points "select event_id, change_type, related_event_id, user_id, amount, direction from points_ledger" ledger
copy_into fault_payments "select transaction_id, user_id, status, pending_action, overdue_amount from apple_iap_transactions" payments

violations=0
# check NAME DB QUERY: QUERY lists violating rows; prints up to 10 of them.
check() {
  local rows count
  rows="$(bench_sql "$2" "$3")"
  count="$(grep -c . <<< "$rows" || true)"
  if ((count > 0)); then
    violations=$((violations + count))
    printf 'VIOLATION %-44s %6d rows, first ones:\n' "$1" "$count"
    head -n 10 <<< "$rows" | sed 's/^/    /'
  else
    printf 'ok        %s\n' "$1"
  fi
}
purchase_event="'payment.apple_iap:' || s.transaction_id"
check "purchase answered or retried: credited once" fault_check "
  select s.transaction_id, s.outcome, s.answers, count(l.event_id) as purchase_rows, count(l.event_id) filter (where l.user_id <> s.user_id) as other_user
  from sent_purchases s left join ledger l on l.change_type = 'purchase' and l.event_id = $purchase_event
  where s.outcome in ('credited', 'outstanding') group by 1, 2, 3
  having count(l.event_id) <> 1 or count(l.event_id) filter (where l.user_id <> s.user_id) > 0"
check "credited but never submitted" fault_check "
  select l.event_id, l.user_id, l.amount from ledger l
  where l.change_type = 'purchase' and not exists (select 1 from sent_purchases s where l.event_id = $purchase_event)"
check "refund accepted: clawed back once" fault_check "
  select s.transaction_id, s.answers, count(l.event_id) as refund_rows, max(p.status) as status
  from sent_purchases s left join ledger l on l.change_type = 'refund' and l.related_event_id = $purchase_event
  left join payments p on p.transaction_id = s.transaction_id
  where s.refund = 'accepted' group by 1, 2
  having count(l.event_id) <> 1 or max(p.status) not in ('refunded', 'refunded_insufficient')"
# No REFUND_REVERSED is sent, so any reversal is wrong too.
check "clawed back without an accepted refund" fault_check "
  select l.event_id, l.change_type, l.related_event_id from ledger l
  where l.change_type = 'refund_reversal' or (l.change_type = 'refund'
    and not exists (select 1 from sent_purchases s where l.related_event_id = $purchase_event and s.refund = 'accepted'))"
check "refunds never accepted" fault_check "select transaction_id, answers from sent_purchases where refund = 'outstanding'"
check "spend answered OK: applied once" fault_check "
  select s.event_id, s.answers, count(l.event_id) from sent_spends s left join ledger l on l.change_type = 'consume' and l.event_id = s.event_id
  where s.outcome = 'ok' group by 1, 2 having count(l.event_id) <> 1"
# A spend never answered is sent again until it is (the driver fails if one stays unknown).
check "spend refused but applied" fault_check "
  select s.event_id, s.outcome, s.answers from sent_spends s join ledger l on l.change_type = 'consume' and l.event_id = s.event_id
  where s.outcome = 'insufficient'"
check "spend applied that was never sent" fault_check "
  select l.event_id from ledger l where l.change_type = 'consume' and not exists (select 1 from sent_spends s where s.event_id = l.event_id)"
check "payment row never submitted" fault_check "
  select p.transaction_id, p.status from payments p where not exists (select 1 from sent_purchases s where s.transaction_id = p.transaction_id)"
check "saga stuck or unfinished" fault_check "
  select transaction_id, status, pending_action from payments
  where pending_action is not null or status not in ('granted', 'refunded', 'refunded_insufficient')"
check "balance = ledger sum, lifetime figures" fault_points "
  select u.user_id, u.balance, coalesce(sum(l.direction * l.amount), 0) as ledger_sum, u.lifetime_earned, u.lifetime_spent
  from user_points u left join points_ledger l on l.user_id = u.user_id group by u.user_id
  having u.balance <> coalesce(sum(l.direction * l.amount), 0)
      or u.lifetime_spent <> coalesce(sum(-l.direction * l.amount) filter (where l.change_type in ('consume', 'consume_reversal')), 0)
      or u.lifetime_earned <> coalesce(sum(l.direction * l.amount) filter (where l.change_type not in ('consume', 'consume_reversal')), 0)"
check "credit lots add up to the balance" fault_points "
  select u.user_id, u.balance, (select coalesce(sum(remaining), 0) from credit_lots c where c.user_id = u.user_id) as lots
  from user_points u
  where u.balance <> (select coalesce(sum(remaining), 0) from credit_lots c where c.user_id = u.user_id)
     or exists (select 1 from credit_lots c where c.user_id = u.user_id and c.remaining + c.spent > c.credited)"

echo "counts:"
bench_sql fault_check "
  select format('  purchases submitted %s (credited %s, outstanding %s, refused %s); duplicate-or-retry submissions %s',
    count(*), count(*) filter (where outcome = 'credited'), count(*) filter (where outcome = 'outstanding'),
    count(*) filter (where outcome = 'refused'), coalesce(sum(array_length(string_to_array(answers, ','), 1) - 1), 0)) from sent_purchases"
bench_sql fault_check "
  select format('  purchase ledger rows %s; refunds accepted %s, clawback rows %s (overdue in %s); spends sent %s (ok %s, insufficient %s, unknown %s), consume rows %s',
    (select count(*) from ledger where change_type = 'purchase'), (select count(*) from sent_purchases where refund = 'accepted'),
    (select count(*) from ledger where change_type = 'refund'), (select count(*) from payments where overdue_amount > 0),
    (select count(*) from sent_spends), (select count(*) from sent_spends where outcome = 'ok'),
    (select count(*) from sent_spends where outcome = 'insufficient'), (select count(*) from sent_spends where outcome = 'unknown'),
    (select count(*) from ledger where change_type = 'consume'))"
bench_sql fault_check "select '  payment rows by status: ' || string_agg(status || ' ' || n, ', ' order by status) from (select status, count(*) n from payments group by 1) t"
bench_sql fault_points "select format('  users %s, credits held %s', count(*), coalesce(sum(balance), 0)) from user_points"

if ((violations > 0 || driver_status != 0)); then
  echo "FAULT TEST FAILED: $violations violating rows, driver exit $driver_status"
  exit 1
fi
echo "FAULT TEST PASSED"
