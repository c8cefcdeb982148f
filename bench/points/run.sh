#!/usr/bin/env bash
# PointsService grant and spend benchmark with its database ceiling, in one run:
#   1. Grant over gRPC (release PointsService, private PostgreSQL cluster),
#      driven by PointsBench (bench/points/swift): distinct event ids, for
#      "distinct" users (a new user per grant) and one "hot" user (every
#      grant waits on that user's row lock). grants/s, p50, p99.
#   2. pgbench on the same cluster with the same client count, a custom
#      single-row update transaction per mode (see write_pgbench_scripts):
#        BEGIN;
#        UPDATE bench_accounts SET balance = balance + 100, updated_at = now() WHERE id = :id;
#        INSERT INTO bench_ledger (account_id, event_id, amount, balance_after) VALUES (:id, <uuid>, 100, <balance>);
#        COMMIT;
#      with :id uniform over 100,000 pre-filled rows ("distinct") or always 1
#      ("hot"). The distinct one runs before the service's phases and again after them, and the
#      ratios use the mean of the two. Its transactions/s is the ceiling: the cheapest durable write
#      of one balance and one ledger row this cluster can do at this client
#      count. A grant does more (replay check, account upsert + FOR UPDATE,
#      ledger insert with three unique indexes and a jsonb column, update).
#   1b. Spend over gRPC, 1 credit per call, by users funded beforehand
#      (a pool of users round-robin, or one hot user): spends/s, p50, p99.
#      A spend locks the account, checks the replay, reads the user's
#      credit lots, moves them (attribution) and writes the consume row.
#   1c. GetBalance over gRPC straight to PointsService (no gateway) for
#      funded users round-robin, beside pgbench's primary-key select of one
#      balance (SELECT balance FROM bench_accounts WHERE id = :id, like
#      `pgbench -S`): the bound for GET balance through the gateway, which
#      adds a hop to this one.
#   2b. pgbench calling the database function points_spend (what one Spend
#      runs in PostgreSQL) directly, 1 credit with a fresh event id, by the
#      users the distinct spend phase funded (still holding credits): the
#      database's own rate for a spend's writes, with no service in front.
# Prints both, and grants/s and spends/s as fractions of the ceiling (issue
# #13's goal: >= 0.8), and spends/s as a fraction of points_spend alone
# (what the service keeps of the database's own rate for a spend).
# Both load generators (PointsBench, pgbench) are pinned to CPU 1;
# PostgreSQL and PointsService are not pinned (they share both cores), so
# the comparison is load generator against the same cluster on the same CPUs.
# Bench rows live in their own database (points_bench, recreated per run).
# Bounded: each phase stops after its request count or its seconds; every
# step has a timeout; the whole run takes < 3 minutes after the build.
#
# Usage: bench/points/run.sh [seconds-per-phase=15] [concurrency=16] [requests-max=200000]
#        (POINTS_BENCH_SERVICE=PATH: another PointsService binary, for an A/B)
# Results also go to bench/out/points-<timestamp>.txt (ignored by git).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
# The project's Debian packages and PostgreSQL (quick when all are there).
"$root/scripts/install-deps.sh" >&2
seconds="${1:-15}"
concurrency="${2:-16}"
requests="${3:-200000}"
[[ "$seconds" =~ ^[0-9]+$ ]] && ((seconds >= 1 && seconds <= 40)) || { echo "seconds-per-phase must be 1...40" >&2; exit 2; }
[[ "$concurrency" =~ ^[0-9]+$ ]] && ((concurrency >= 1 && concurrency <= 100)) || { echo "concurrency must be 1...100" >&2; exit 2; }
[[ "$requests" =~ ^[0-9]+$ ]] && ((requests >= 1 && requests <= 1000000)) || { echo "requests-max must be 1...1000000" >&2; exit 2; }
warmup=500
accounts=100000
load_cpu=1
for tool in pgbench psql taskset curl; do
  command -v "$tool" >/dev/null || { echo "missing tool: $tool (scripts/install-deps.sh)" >&2; exit 2; }
done
[[ $(getconf _NPROCESSORS_ONLN) -ge 2 ]] || { echo "needs 2 CPUs (load generators pinned to CPU 1)" >&2; exit 2; }

echo "building PointsService and PointsBench (release)" >&2
# POINTS_BENCH_SERVICE=PATH measures that PointsService binary instead of this tree's (an A/B against an
# earlier commit's release build: the service migrates the bench's fresh database to its own schema).
if [[ -n "${POINTS_BENCH_SERVICE:-}" ]]; then
  [[ -x "$POINTS_BENCH_SERVICE" ]] || { echo "POINTS_BENCH_SERVICE is not an executable: $POINTS_BENCH_SERVICE" >&2; exit 2; }
  service_binary="$POINTS_BENCH_SERVICE"
else
  timeout 900 "$root/scripts/build-release.sh" --product PointsService --package-path "$root" >/dev/null
  service_binary="$root/.build/release/PointsService"
fi
timeout 900 "$root/scripts/build-release.sh" --product PointsBench --package-path "$root" >/dev/null
bench_binary="$root/.build/release/PointsBench"

# --- Database -------------------------------------------------------------------
eval "$(timeout 120 "$root/scripts/pg.sh" start)"
psql_admin=(env PGOPTIONS=-cclient_min_messages=warning psql -h 127.0.0.1 -p "$PG_PORT" -U iap -v ON_ERROR_STOP=1 -qAt)
timeout 60 "${psql_admin[@]}" -d postgres -c "drop database if exists points_bench" -c "create database points_bench"
database_url="postgresql://iap@127.0.0.1:$PG_PORT/points_bench"
psql_bench=("${psql_admin[@]}" -d points_bench)

work="$(mktemp -d)"
service_pid=""
stop_service() {
  if [[ -n "$service_pid" ]]; then
    kill "$service_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$service_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$service_pid" 2>/dev/null || true
    wait "$service_pid" 2>/dev/null || true
    service_pid=""
  fi
}
trap 'status=$?; stop_service; rm -rf "$work"; ((status == 0)) || echo "bench/points/run.sh: failed (exit $status)" >&2' EXIT

# --- PointsService ---------------------------------------------------------------
# INTERNAL_AUTH=off: PointsBench calls over cleartext loopback, without a certificate.
DATABASE_URL="$database_url" DATABASE_MAX_CONNECTIONS="$concurrency" LOG_LEVEL=warning ADMIN_LISTEN_ADDR=127.0.0.1:0 \
  PACKAGES_FILE="$root/config/packages.json" INTERNAL_AUTH=off \
  "$service_binary" --listen 127.0.0.1:0 > "$work/service.out" 2> "$work/service.err" &
service_pid=$!
address=""
for _ in $(seq 1 200); do
  address="$(sed -n 's/^PointsService listening on //p' "$work/service.out" 2>/dev/null)"
  [[ -n "$address" ]] && break
  kill -0 "$service_pid" 2>/dev/null || break
  sleep 0.05
done
[[ -n "$address" ]] || { echo "PointsService did not start:" >&2; cat "$work/service.err" >&2; exit 1; }

# grants MODE [OPERATION]: prints PointsBench's key=value line (grant, or spend of 1 credit
# or GetBalance by funded users).
grants() {
  local operation="${2:-grant}"
  timeout $((seconds * 2 + 120)) taskset -c "$load_cpu" "$bench_binary" --target "$address" --mode "$1" --operation "$operation" \
    --requests "$requests" --warmup "$warmup" --concurrency "$concurrency" --seconds "$seconds" 2> "$work/bench-$operation-$1.err" \
    || { echo "PointsBench $operation $1 failed:" >&2; cat "$work/bench-$operation-$1.err" "$work/service.err" >&2; exit 1; }
}
field() { sed -n "s/.*\b$2=\([^ ]*\).*/\1/p" <<< "$1"; }
# commit_totals: "grants_sum grants_count spends_sum spends_count" of PointsService's group-commit
# histograms (its admin /metrics); per_commit BEFORE AFTER KIND: the mean writes per statement between two.
commit_totals() {
  local admin
  admin="$(sed -n 's/^PointsService admin listening on //p' "$work/service.out" | head -1)"
  curl -s --max-time 5 "http://$admin/metrics" 2>/dev/null | awk '
    $1 == "iap_points_grants_per_commit_sum" { gs = $2 } $1 == "iap_points_grants_per_commit_count" { gc = $2 }
    $1 == "iap_points_spends_per_commit_sum" { ss = $2 } $1 == "iap_points_spends_per_commit_count" { sc = $2 }
    END { printf "%d %d %d %d\n", gs, gc, ss, sc }'
}
per_commit() {
  awk -v before="$1" -v after="$2" -v kind="$3" 'BEGIN {
    split(before, b, " "); split(after, a, " "); i = (kind == "spends") ? 3 : 1
    n = a[i + 1] - b[i + 1]; printf "%.2f %s per statement (%d statements)", (n > 0 ? (a[i] - b[i]) / n : 0), kind, n }'
}

# The grants check their own effect: balance = sum of the ledger for every user.
check_ledger() {
  local bad
  bad="$(timeout 60 "${psql_bench[@]}" -c "select count(*) from user_points u where u.balance <> (select coalesce(sum(direction * amount), 0) from points_ledger l where l.user_id = u.user_id)")"
  [[ "$bad" == "0" ]] || { echo "ledger check failed: $bad users whose balance is not the sum of their ledger" >&2; exit 1; }
}

# --- pgbench ceiling ---------------------------------------------------------------
timeout 120 "${psql_bench[@]}" <<SQL
create table bench_accounts (id int primary key, balance bigint not null default 0, updated_at timestamptz not null default now());
insert into bench_accounts (id) select generate_series(1, $accounts);
create table bench_ledger (id bigint generated always as identity primary key, account_id int not null references bench_accounts (id),
                           event_id text not null unique, amount bigint not null, balance_after bigint not null,
                           created_at timestamptz not null default now());
vacuum analyze bench_accounts;
SQL
write_pgbench_script() {
  local id_expression="$1" file="$2"
  cat > "$file" <<SCRIPT
\\set id $id_expression
BEGIN;
UPDATE bench_accounts SET balance = balance + 100, updated_at = now() WHERE id = :id;
INSERT INTO bench_ledger (account_id, event_id, amount, balance_after)
  VALUES (:id, gen_random_uuid()::text, 100, (SELECT balance FROM bench_accounts WHERE id = :id));
COMMIT;
SCRIPT
}
write_pgbench_script "random(1, $accounts)" "$work/distinct.sql"
write_pgbench_script "1" "$work/hot.sql"
printf '\\set id random(1, %d)\nSELECT balance FROM bench_accounts WHERE id = :id;\n' "$accounts" > "$work/select.sql"

# pgbench_run MODE: prints "tps p50_ms p99_ms" from pgbench's per-transaction log.
pgbench_run() {
  local mode="$1"
  (cd "$work" && timeout $((seconds + 60)) taskset -c "$load_cpu" pgbench -h 127.0.0.1 -p "$PG_PORT" -U iap -n -M prepared \
      -c "$concurrency" -j 1 -T "$seconds" -f "$mode.sql" -l --log-prefix="pgbench-$mode" points_bench > "run-pgbench-$mode.out" 2>&1) \
    || { echo "pgbench $mode failed:" >&2; cat "$work/run-pgbench-$mode.out" >&2; exit 1; }
  local tps
  tps="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$work/run-pgbench-$mode.out" | head -1)"
  # Column 3 of the log is the transaction's latency in microseconds.
  cat "$work"/pgbench-"$mode".* 2>/dev/null | grep -v '^[^0-9]' | awk '{print $3}' | sort -n > "$work/pg-$mode.lat" || true
  local count p50 p99
  count="$(wc -l < "$work/pg-$mode.lat")"
  ((count > 0)) || { echo "pgbench $mode: empty transaction log" >&2; exit 1; }
  p50="$(awk -v n="$count" 'NR == int((n * 0.50) + 0.999999) {printf "%.2f", $1 / 1000}' "$work/pg-$mode.lat")"
  p99="$(awk -v n="$count" 'NR == int((n * 0.99) + 0.999999) {printf "%.2f", $1 / 1000}' "$work/pg-$mode.lat")"
  echo "$tps $p50 $p99"
}
# The distinct reference runs twice, before the service's phases and after them: minutes apart, the
# same pgbench on the same machine has moved by a third (docs/PERFORMANCE.md, "Session 12"), so the
# report prints both and takes the ratios against their mean.
cp "$work/distinct.sql" "$work/distinct-before.sql"
pg_distinct_before="$(pgbench_run distinct-before)"

distinct_line="$(grants distinct)"
hot_line="$(grants hot)"
commits_before="$(commit_totals)"
spend_distinct_line="$(grants distinct spend)"
spend_distinct_commits="$(per_commit "$commits_before" "$(commit_totals)" spends)"
spend_hot_line="$(grants hot spend)"
balance_line="$(grants distinct balance)"
check_ledger
stop_service
granted_rows="$(timeout 60 "${psql_bench[@]}" -c "select count(*) from points_ledger")"

# points_spend alone: the users still holding credits, numbered, picked at
# random per call (a primary-key lookup more than the service's call).
timeout 120 "${psql_bench[@]}" <<SQL
create table bench_spenders (n int primary key, user_id uuid not null);
insert into bench_spenders select row_number() over (order by user_id), user_id from user_points where balance >= 1000;
analyze bench_spenders;
SQL
spenders="$(timeout 60 "${psql_bench[@]}" -c "select count(*) from bench_spenders")"
((spenders > 0)) || { echo "no funded users left for the points_spend phase" >&2; exit 1; }
cat > "$work/spend-function.sql" <<SCRIPT
\\set n random(1, $spenders)
SELECT * FROM points_spend((SELECT user_id FROM bench_spenders WHERE n = :n), gen_random_uuid()::text, 1::bigint, 'chat', 'bench',
                           '$(printf 'f%.0s' $(seq 1 64))', '{}'::jsonb);
SCRIPT
# Assignments first: a failing command substitution then stops the script (set -e).
pg_distinct="$(pgbench_run distinct)"
pg_hot="$(pgbench_run hot)"
pg_spend="$(pgbench_run spend-function)"
pg_select="$(pgbench_run select)"
read -r pg_distinct_tps pg_distinct_p50 pg_distinct_p99 <<< "$pg_distinct"
read -r pg_distinct_before_tps _ _ <<< "$pg_distinct_before"
pg_distinct_after_tps="$pg_distinct_tps"
pg_distinct_tps="$(awk -v a="$pg_distinct_before_tps" -v b="$pg_distinct_after_tps" 'BEGIN { printf "%.1f", (a + b) / 2 }')"
read -r pg_hot_tps pg_hot_p50 pg_hot_p99 <<< "$pg_hot"
read -r pg_spend_tps pg_spend_p50 pg_spend_p99 <<< "$pg_spend"
read -r pg_select_tps pg_select_p50 pg_select_p99 <<< "$pg_select"
applied="$(timeout 60 "${psql_bench[@]}" -c "select count(*) from points_ledger where biz_id = 'bench'")"
((applied > 0)) || { echo "points_spend phase: no consume row written" >&2; exit 1; }
check_ledger

# --- Report ----------------------------------------------------------------------
out_dir="$root/bench/out"
mkdir -p "$out_dir"
report="$out_dir/points-$(date -u +%Y%m%dT%H%M%SZ).txt"
{
  echo "PointsService grants vs pgbench ceiling: $(date -u +%FT%TZ), $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1))"
  echo "PostgreSQL $(timeout 10 "${psql_bench[@]}" -c 'show server_version'), fsync=on synchronous_commit=on; concurrency $concurrency; ${seconds}s per phase; load generators on CPU $load_cpu"
  echo "grant rows written: $granted_rows (after warm-ups of $warmup per mode); ledger check: balance = sum(ledger) for every user: ok"
  printf '%-10s %-10s %12s %10s %10s\n' mode system "per second" "p50 ms" "p99 ms"
  printf 'distinct pgbench before the service phases %.0f tps, after them %.0f tps: the distinct ratios use their mean\n' \
    "$pg_distinct_before_tps" "$pg_distinct_after_tps"
  for mode in distinct hot; do
    line="${mode}_line"; tps="pg_${mode}_tps"; p50="pg_${mode}_p50"; p99="pg_${mode}_p99"
    printf '%-10s %-10s %12s %10s %10s\n' "$mode" grants "$(field "${!line}" grants_per_second)" "$(field "${!line}" p50_ms)" "$(field "${!line}" p99_ms)"
    printf '%-10s %-10s %12.0f %10s %10s\n' "$mode" pgbench "${!tps}" "${!p50}" "${!p99}"
    ratio="$(awk -v g="$(field "${!line}" grants_per_second)" -v p="${!tps}" 'BEGIN { printf "%.2f", (p > 0 ? g / p : 0) }')"
    echo "$mode: grants/s / pgbench tps = $ratio (goal >= 0.80)"
    spend_line="spend_${mode}_line"
    printf '%-10s %-10s %12s %10s %10s\n' "$mode" spends "$(field "${!spend_line}" spends_per_second)" "$(field "${!spend_line}" p50_ms)" "$(field "${!spend_line}" p99_ms)"
    ratio="$(awk -v g="$(field "${!spend_line}" spends_per_second)" -v p="${!tps}" 'BEGIN { printf "%.2f", (p > 0 ? g / p : 0) }')"
    echo "$mode: spends/s / pgbench tps = $ratio (goal >= 0.80)"
    [[ "$mode" == distinct ]] && echo "distinct spends, group commit (warm-up included): $spend_distinct_commits"
  done
  printf '%-10s %-10s %12.0f %10s %10s\n' distinct points_spend "$pg_spend_tps" "$pg_spend_p50" "$pg_spend_p99"
  echo "distinct: points_spend alone (pgbench, $applied consume rows) / pgbench tps = $(awk -v g="$pg_spend_tps" -v p="$pg_distinct_tps" 'BEGIN { printf "%.2f", (p > 0 ? g / p : 0) }')" \
    "(the database's own bound for spends); spends/s / points_spend alone = $(awk -v g="$(field "$spend_distinct_line" spends_per_second)" -v p="$pg_spend_tps" 'BEGIN { printf "%.2f", (p > 0 ? g / p : 0) }')"
  printf '%-10s %-10s %12s %10s %10s\n' distinct balance "$(field "$balance_line" balances_per_second)" "$(field "$balance_line" p50_ms)" "$(field "$balance_line" p99_ms)"
  printf '%-10s %-10s %12.0f %10s %10s\n' distinct "pgbench -S" "$pg_select_tps" "$pg_select_p50" "$pg_select_p99"
  echo "distinct: GetBalance over gRPC (no gateway) / pgbench primary-key select = $(awk -v g="$(field "$balance_line" balances_per_second)" -v p="$pg_select_tps" 'BEGIN { printf "%.2f", (p > 0 ? g / p : 0) }') (GET balance through the gateway: goal >= 0.50)"
  echo "raw: ${distinct_line}"
  echo "raw: ${hot_line}"
  echo "raw: ${spend_distinct_line}"
  echo "raw: ${spend_hot_line}"
  echo "raw: ${balance_line}"
} | tee "$report"
