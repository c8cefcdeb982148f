#!/usr/bin/env bash
# "Flat as it grows" (issue #13): verify/s and balance/s on empty databases
# and on databases holding PURCHASES rows in apple_iap_transactions and
# LEDGER_ROWS rows in points_ledger, with the same wrk parameters, and the
# plans of the periodic scans and per-user reads on the full databases.
#
#   1. Builds the release products; starts the private cluster (scripts/pg.sh).
#   2. empty: bench/gateway/run.sh on freshly recreated databases
#      (GATEWAY_BENCH_DATABASES=scale_empty): balance, verify with distinct
#      fresh transactions, saga, and its pgbench references (the machine's
#      drift between the two runs: same scratch database both times).
#   3. prefill, with SQL only, into scale_full_payments and scale_full_points
#      (migrated by `PaymentsService migrate` / `PointsService migrate`):
#      bench/scale/plan.sql (the same deterministic plan in both databases),
#      then batches of users, one transaction each (payments.sql,
#      points.sql: set-based INSERT ... SELECT, so memory and WAL per batch
#      stay bounded; the two databases side by side), the loaded tables'
#      keys and indexes dropped before and built after the batches
#      (bulk-begin.sql, bulk-end.sql: same names and definitions), then
#      the invariants (check.sql: balance = ledger sum =
#      open lots, balance_after chain, lifetime figures, spend movements),
#      VACUUM (ANALYZE), a CHECKPOINT, sync and a SETTLE_SECONDS pause.
#   4. full: bench/gateway/run.sh again on the prefilled databases
#      (GATEWAY_BENCH_KEEP_DATABASES=1), its tokens minted for users of the
#      big tables (GATEWAY_BENCH_USERS; the balance phase reads over all of them).
#      ROUNDS=2 runs empty and full once more (ABAB) and reports the mean.
#   5. Prints phase, empty rate, full rate, full/empty and "within 10%"
#      (full >= 0.90 x empty), the EXPLAIN (ANALYZE, BUFFERS) plans of
#      plans-payments.sql and plans-points.sql on the full databases, each
#      flagged when it holds a Seq Scan on a big table, database sizes and
#      the prefill time.
#
# Knobs (environment): PURCHASES=1000000 LEDGER_ROWS=10000000 (at most 50
# ledger rows per purchase) USERS=PURCHASES/5 BATCH_LEDGER_ROWS=500000 (rows
# per prefill transaction) PHASE_SECONDS=10 CONNECTIONS=16 ROUNDS=1
# SETTLE_SECONDS=30 (pause after the prefill's sync, before measuring)
# KEEP_FULL=1 (reuse scale_full_* when it holds exactly this prefill: no
# second prefill while tuning). A smoke run:
#   PURCHASES=20000 LEDGER_ROWS=200000 bench/scale/run.sh
# Time on the shared 2-vCPU machine (after the build): the prefill of
# 1M/10M takes 6.5 minutes when the machine is quiet, 11 when other builds
# share it (payments and points side by side, keys and indexes built at
# the end); the invariant check and VACUUM 1-2 more; each gateway run
# 1-2: the whole run 12-17 minutes, each further round 2-4 more. Every
# step has a timeout (each SQL step 10 minutes, index builds 25, each
# gateway run 15).
# Output also goes to bench/out/scale-<timestamp>.txt (ignored by git).
# Leaves the cluster running (scripts/pg.sh stop stops it) and the
# scale_* databases in place (about 14 GB at full size; drop them with
# psql, or keep them for KEEP_FULL=1).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
# The project's Debian packages and PostgreSQL (quick when all are there).
"$root/scripts/install-deps.sh" >&2
purchases="${PURCHASES:-1000000}"
ledger_rows="${LEDGER_ROWS:-10000000}"
users="${USERS:-$((purchases / 5))}"
batch_rows="${BATCH_LEDGER_ROWS:-500000}"
seconds="${PHASE_SECONDS:-10}"
connections="${CONNECTIONS:-16}"
rounds="${ROUNDS:-1}"
keep_full="${KEEP_FULL:-0}"
settle="${SETTLE_SECONDS:-30}"
for knob in purchases ledger_rows users batch_rows seconds connections rounds settle; do
  [[ "${!knob}" =~ ^[0-9]+$ ]] || { echo "$knob must be a whole number" >&2; exit 2; }
done
((purchases >= 1000 && purchases <= 5000000)) || { echo "PURCHASES must be 1000...5000000" >&2; exit 2; }
((ledger_rows >= purchases && ledger_rows <= 50 * purchases)) || { echo "LEDGER_ROWS must be 1...50 x PURCHASES" >&2; exit 2; }
((users >= 10 && users <= purchases)) || { echo "USERS must be 10...PURCHASES" >&2; exit 2; }
((batch_rows >= 10000 && batch_rows <= 2000000)) || { echo "BATCH_LEDGER_ROWS must be 10000...2000000" >&2; exit 2; }
((rounds >= 1 && rounds <= 3)) || { echo "ROUNDS must be 1...3" >&2; exit 2; }
((settle <= 600)) || { echo "SETTLE_SECONDS must be 0...600" >&2; exit 2; }
# Distinct fresh transactions for a verify phase at up to 1,000/s.
transactions=$((seconds * 1000 < 200000 ? seconds * 1000 : 200000))
batches=$(((ledger_rows + batch_rows - 1) / batch_rows))
batch_users=$(((users + batches - 1) / batches))

work="$(mktemp -d)"
source "$root/bench/lib/system.sh"
loader_pid=""
trap 'status=$?; [[ -z "$loader_pid" ]] || { pkill -P "$loader_pid"; kill "$loader_pid"; } 2>/dev/null; rm -rf "$work"; ((status == 0)) || echo "bench/scale/run.sh: failed (exit $status)" >&2' EXIT
out_dir="$root/bench/out"
mkdir -p "$out_dir"
report="$out_dir/scale-$(date -u +%Y%m%dT%H%M%SZ).txt"
say() { echo "$*" | tee -a "$report"; }
# elapsed SINCE: seconds since the epoch second SINCE.
elapsed() { echo $(($(date +%s) - $1)); }

bench_build PointsService PaymentsService Gateway GatewayBench SagaBench
bench_pg_start
full_url() { echo "postgresql://iap@127.0.0.1:$PG_PORT/scale_full_$1"; }
# on DB FILE [VAR=VALUE...]: runs a bench/scale SQL file on scale_full_DB, bounded (SQL_TIMEOUT, 600 s).
on() {
  local db="$1" file="$2"; shift 2
  local vars=() assignment
  for assignment in "$@"; do vars+=(-v "$assignment"); done
  timeout "${SQL_TIMEOUT:-600}" "${psql_admin[@]}" -d "scale_full_$db" "${vars[@]}" -f "$root/bench/scale/$file"
}

# gateway_run NAME PREFIX [ENV...]: one bench/gateway/run.sh on PREFIX_* databases, output in $work/NAME.txt.
gateway_run() {
  local name="$1" prefix="$2"; shift 2
  timeout 60 "${psql_admin[@]}" -c checkpoint
  echo "== $name: bench/gateway/run.sh $seconds $connections $transactions on ${prefix}_*" >&2
  env GATEWAY_BENCH_DATABASES="$prefix" "$@" timeout 900 "$root/bench/gateway/run.sh" "$seconds" "$connections" "$transactions" \
    > "$work/$name.txt" || { echo "gateway run $name failed" >&2; exit 1; }
}

prefill_signature="purchases=$purchases ledger_rows=$ledger_rows users=$users"
prefilled() {
  [[ "$keep_full" == 1 ]] || return 1
  [[ "$(timeout 30 "${psql_admin[@]}" -d scale_full_points -c "select obj_description('points_ledger'::regclass)" 2>/dev/null)" \
      == "scale prefill $prefill_signature" ]]
}

# prefill_batches DB TABLES STARTED: every batch of users of one database, in
# order, into TABLES (SQL list) without their keys and indexes, built afterwards.
prefill_batches() {
  local db="$1" tables="$2" started="$3" lo hi batch=0 t
  on "$db" bulk-begin.sql tables="$tables" >/dev/null
  for ((lo = 1; lo <= users; lo += batch_users)); do
    hi=$((lo + batch_users - 1)); batch=$((batch + 1)); t=$(date +%s)
    on "$db" "$db.sql" lo="$lo" hi="$hi"
    echo "prefill $db batch $batch/$batches (users $lo..$hi): $(elapsed "$t") s, $(elapsed "$started") s in all" >&2
  done
  t=$(date +%s)
  SQL_TIMEOUT=1500 on "$db" bulk-end.sql >/dev/null
  echo "prefill $db: keys and indexes built in $(elapsed "$t") s, $(elapsed "$started") s in all" >&2
}

prefill() {
  local started t
  started=$(date +%s)
  bench_recreate_databases scale_full_points scale_full_payments
  timeout 120 env DATABASE_URL="$(full_url points)" LOG_LEVEL=warning "$bin/PointsService" migrate >/dev/null
  timeout 120 env DATABASE_URL="$(full_url payments)" LOG_LEVEL=warning "$bin/PaymentsService" migrate >/dev/null
  local base; base="$(date +%s)"
  for db in payments points; do
    on "$db" plan.sql users="$users" purchases="$purchases" ledger_rows="$ledger_rows" base="$base" >&2
  done
  # The two databases load side by side (one core each).
  prefill_batches payments "'apple_iap_transactions','consumption_answers'" "$started" &
  loader_pid=$!
  prefill_batches points "'points_ledger','lot_movements','credit_lots'" "$started"
  wait "$loader_pid" || { echo "payments prefill failed" >&2; exit 1; }
  loader_pid=""
  for db in payments points; do
    timeout 120 "${psql_admin[@]}" -d "scale_full_$db" -c "drop view scale_purchases" -c "drop table scale_users, scale_meta" \
      -c "drop function scale_h(bigint, bigint)"
  done
  prefill_seconds=$(elapsed "$started")
  t=$(date +%s)
  on points check.sql > "$work/check.txt"
  check_seconds=$(elapsed "$t")
  if awk -F'|' '$2 != 0 { bad = 1 } END { exit !bad }' "$work/check.txt"; then
    echo "prefill: ledger invariants violated: $(tr '|\n' ' ;' < "$work/check.txt")" >&2; exit 1
  fi
  t=$(date +%s)
  for db in payments points; do timeout 1200 "${psql_admin[@]}" -d "scale_full_$db" -c "vacuum (analyze)"; done
  timeout 300 "${psql_admin[@]}" -c checkpoint
  vacuum_seconds=$(elapsed "$t")
  # Let the kernel finish writing the prefill back (dirty pages, extent
  # conversions) before measuring: full runs started right after a prefill
  # measured slower in every process, the gateway's included.
  t=$(date +%s)
  timeout 300 sync || true
  sleep "$settle"
  settle_seconds=$(elapsed "$t")
  timeout 30 "${psql_admin[@]}" -d scale_full_points -c "comment on table points_ledger is 'scale prefill $prefill_signature'"
}

# rate ROUTE FILE: requests/s of a route line of a gateway report ("balance 5123.45 ...").
rate() { awk -v route="$1" '$1 == route { print $2; exit }' "$2"; }
# reference TEXT FILE: the per-second figure of a pgbench reference line.
reference() { grep -F "$1" "$2" | awk '{ print $NF; exit }'; }
# saga_rate FILE: sagas/s of the saga line.
saga_rate() { sed -n 's/^saga .* sagas_per_second=\([0-9.]*\).*/\1/p' "$1" | head -1; }
# mean_of NAME-PREFIX EXTRACTOR ARGS...: the mean over the rounds' reports.
mean_of() {
  local prefix="$1"; shift
  local round values=()
  for round in $(seq 1 "$rounds"); do values+=("$("$@" "$work/$prefix-$round.txt" | head -1)"); done
  printf '%s\n' "${values[@]}" | awk '{ s += $1; n++ } END { if (n) printf "%.2f", s / n }'
}
# table_row LABEL EXTRACTOR ARGS...: a rate (higher is better) of empty and full, their ratio and the verdict.
table_row() {
  local label="$1"; shift
  local empty full
  empty="$(mean_of empty "$@")"; full="$(mean_of full "$@")"
  awk -v l="$label" -v e="$empty" -v f="$full" -v cost="${COST_ROW:-0}" 'BEGIN {
    r = (e > 0 ? sprintf("%8.3f", f / e) : "     n/a")
    printf "%-30s %12s %12s %s  %s\n", l, e, f, r, (cost ? "(a cost)" : (e > 0 && f / e >= 0.90 ? "yes" : "NO")) }'
}
# per_purchase FIELD FILE: a figure of the report's "per purchase" line: cpu (total ms), wal (bytes) or fpi (full-page images).
per_purchase() {
  sed -n 's/^per purchase .* total \([0-9.]*\) ms CPU; .* WAL \([0-9]*\) bytes, \([0-9.]*\) full-page images.*/\1 \2 \3/p' "$2" |
    awk -v field="$1" '{ print (field == "cpu" ? $1 : field == "wal" ? $2 : $3); exit }'
}

: > "$report"
say "Flat as it grows (issue #13): $(date -u +%FT%TZ), $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)), load average $(cut -d' ' -f1-3 /proc/loadavg)"
say "command: PURCHASES=$purchases LEDGER_ROWS=$ledger_rows USERS=$users BATCH_LEDGER_ROWS=$batch_rows PHASE_SECONDS=$seconds CONNECTIONS=$connections ROUNDS=$rounds bench/scale/run.sh"
gateway_run empty-1 scale_empty
prefill_seconds="" check_seconds="" vacuum_seconds="" settle_seconds=""
if prefilled; then
  echo "scale_full_* already holds this prefill (KEEP_FULL=1): reused" >&2
else
  prefill
fi
# Users of the prefill (they have spent; the gateway runs' own users have not).
timeout 60 "${psql_admin[@]}" -d scale_full_points \
  -c "select user_id from user_points where lifetime_spent > 0 order by md5(user_id::text) limit 32" > "$work/users"
gateway_run full-1 scale_full GATEWAY_BENCH_KEEP_DATABASES=1 GATEWAY_BENCH_USERS="$work/users"
for round in $(seq 2 "$rounds"); do
  gateway_run "empty-$round" scale_empty
  gateway_run "full-$round" scale_full GATEWAY_BENCH_KEEP_DATABASES=1 GATEWAY_BENCH_USERS="$work/users"
done

say ""
if [[ -n "$prefill_seconds" ]]; then
  say "prefill: $prefill_seconds s ($batches batches of $batch_users users), invariant check $check_seconds s, vacuum (analyze) + checkpoint $vacuum_seconds s, sync + settle $settle_seconds s"
  say "invariants (violations, all must be 0): $(tr '|\n' ' ;' < "$work/check.txt")"
else
  say "prefill: reused from an earlier run (KEEP_FULL=1)"
fi
say "rows: $(timeout 60 "${psql_admin[@]}" -d scale_full_payments -c "select count(*) || ' apple_iap_transactions (' || count(*) filter (where pending_action is not null) || ' owing a step), ' || (select count(*) from consumption_answers) || ' consumption_answers' from apple_iap_transactions"); $(timeout 60 "${psql_admin[@]}" -d scale_full_points -c "select (select count(*) from points_ledger) || ' points_ledger, ' || (select count(*) from user_points) || ' user_points, ' || (select count(*) from credit_lots) || ' credit_lots, ' || (select count(*) from lot_movements) || ' lot_movements'")"
for db in payments points; do
  say "size scale_full_$db: $(timeout 60 "${psql_admin[@]}" -d "scale_full_$db" -c "select pg_size_pretty(pg_database_size(current_database())) || ' (' || string_agg(relname || ' ' || pg_size_pretty(pg_total_relation_size(oid)), ', ' order by pg_total_relation_size(oid) desc) || ')' from (select oid, relname from pg_class where relkind = 'r' and relnamespace = 'public'::regnamespace order by pg_total_relation_size(oid) desc limit 4) t")"
done
say ""
say "wrk -t1 -c$connections -d${seconds}s per phase; mean of $rounds round(s); within 10%: full >= 0.90 x empty"
printf '%-30s %12s %12s %8s  %s\n' phase "empty /s" "full /s" full/empty "within 10%" | tee -a "$report"
{
  table_row "balance (GET /points/balance)" rate balance
  table_row "verify (POST .../verify)" rate verify
  table_row "saga (VerifyTransaction)" saga_rate
  table_row "pgbench -S (machine control)" reference "pgbench -S -M prepared"
  table_row "pgbench purchase.sql (control)" reference "pgbench purchase.sql"
  COST_ROW=1 table_row "per purchase: CPU ms, all" per_purchase cpu
  COST_ROW=1 table_row "per purchase: WAL bytes" per_purchase wal
  COST_ROW=1 table_row "per purchase: full-page images" per_purchase fpi
} | tee -a "$report"
for round in $(seq 1 "$rounds"); do
  for kind in empty full; do
    { echo "--- $kind, round $round (bench/gateway/run.sh report):"; cat "$work/$kind-$round.txt"; } >> "$report"
  done
done

# The user who spent the most: one of the heavy buyers, with thousands of ledger
# rows (not a bench user: those earn through the gateway runs but never spend).
heavy_user="$(timeout 60 "${psql_admin[@]}" -d scale_full_points -c "select user_id from user_points order by lifetime_spent desc limit 1")"
purchase_event="$(timeout 60 "${psql_admin[@]}" -d scale_full_points -c "select related_event_id from points_ledger where change_type = 'refund' and user_id = '$heavy_user' limit 1")"
[[ -n "$purchase_event" ]] || purchase_event="payment.apple_iap:none"
event_id="$(timeout 60 "${psql_admin[@]}" -d scale_full_points -c "select event_id from points_ledger where user_id = '$heavy_user' order by seq limit 1")"
say ""
say "plans on the full databases (heavy user: $(timeout 30 "${psql_admin[@]}" -d scale_full_points -c "select count(*) from points_ledger where user_id = '$heavy_user'") ledger rows):"
on payments plans-payments.sql heavy_user="$heavy_user" > "$work/plans.txt"
on points plans-points.sql heavy_user="$heavy_user" event_id="$event_id" purchase_event_id="$purchase_event" >> "$work/plans.txt"
big_tables='apple_iap_transactions|points_ledger|user_points|credit_lots|lot_movements|consumption_answers'
awk -v big="Seq Scan on ($big_tables)( |$)" '
  /^### / { if (name != "") print verdict "  " name; name = substr($0, 5); verdict = "ok (indexes only)   " }
  $0 ~ big { verdict = "SEQ SCAN ON A BIG TABLE" }
  END { if (name != "") print verdict "  " name }' "$work/plans.txt" | tee -a "$report"
say ""
cat "$work/plans.txt" >> "$report"
echo "full plans and both gateway reports in $report" >&2
