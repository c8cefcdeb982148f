#!/usr/bin/env bash
# Gateway benchmark over the whole system (release Gateway, PaymentsService,
# PointsService on the private PostgreSQL cluster), with wrk --latency:
#   balance  GET /api/v1/points/balance over the $tokens users (bench/gateway/balance.lua,
#            token i mod #tokens): Gateway -> Points -> one SELECT; under load the
#            gateway's concurrent reads share GetBalances calls (the users per
#            call are printed, from the gateway's iap_gateway_balance_reads_per_call,
#            and a call's mean duration as the gateway and PointsService count it)
#   verify   POST /api/v1/payments/apple/transactions/verify with distinct fresh
#            transactions: pre-signed StoreKit 2 JWS (bench/gateway/swift,
#            GatewayBench, throw-away local PKI whose root PaymentsService is
#            told to trust via APPLE_ROOT_CERTS), cycled by bench/gateway/verify.lua
#            over $tokens users. Each answer is checked: "granted" counts, a
#            replay or error is reported. The full path: JSON + JWT checks,
#            JWS verification (chain + ES256), payment row, saga, Grant over gRPC.
#   saga     the same verify→grant saga without the gateway: SagaBench calls
#            payments.v1.Payments/VerifyTransaction over gRPC with its own
#            fresh transactions (a new user each); every answer must be GRANTED.
#   references (same cluster, same client count, same run, pinned like wrk):
#            `pgbench -S -M prepared` (select-only, on a pgbench -i -s 1 scratch
#            database) beside balance, run right before and right after the
#            balance phase, the ratio against their mean (the machine's other
#            load moves between minutes; both are printed); beside verify, a pgbench custom script
#            with the commits and statements of one purchase (PERFORMANCE.md,
#            "Statements and round trips per purchase"): 3 autocommitted
#            statements, the insert of step 1 and the guarded update of step 3
#            in the payments database and the Grant in points: 3 commits,
#            3 statements.
#   per request: CPU ms and context switches (voluntary + involuntary) of
#            each process (postgres = postmaster and all its children) from
#            /proc before/after the phase, and the cluster's write
#            transactions (xids taken); per purchase = per ledger row written.
# Knobs (environment):
#   GATEWAY_BENCH_STATEMENTS=1  log_statement=all on the bench databases; one
#            more verify after the check call; prints the statements the
#            cluster logged for it and exits (no load).
#   GATEWAY_BENCH_PERF=DIR      perf record -a -g -F 499 during the balance and
#            verify phases into DIR/{balance,verify}.data, the processes' pids
#            in DIR/{balance,verify}.pids (split with perf script / --pid;
#            bench/gateway/perf-split.py prints the table PERFORMANCE.md uses).
#            GATEWAY_BENCH_PERF_DWARF=1: call graphs unwound from DWARF (-F 199),
#            for inclusive shares (perf report --children) where frame
#            pointers break off in libc and the Swift runtime.
#            GATEWAY_BENCH_PERF_SCHED=1: instead, half a second from the
#            middle of each phase of scheduler and syscall tracepoints
#            (sched_switch, sched_wakeup, sys_enter, sys_exit), for
#            bench/gateway/call-timeline.py (where a coalesced balance
#            call's time goes, hop by hop). The tracing slows the phase down.
#   GATEWAY_BENCH_PHASES=balance  only the balance phase and its `pgbench -S`
#            reference (no verify, saga or purchase.sql; two transactions are
#            signed, for the checked verify call): the quick A/B of a change to
#            the read path.
#   GATEWAY_BENCH_METRICS=DIR   after the balance and verify phases, each
#            service's admin /metrics into DIR/{balance,verify}-NAME.prom
#            (e.g. the gateway's and PointsService's call latency histograms).
#   GATEWAY_BENCH_DATABASES=PREFIX  the bench databases are PREFIX_points,
#            PREFIX_payments and PREFIX_pgbench (default gateway_bench).
#   GATEWAY_BENCH_KEEP_DATABASES=1  PREFIX_points and PREFIX_payments are used
#            as they are (e.g. prefilled by bench/scale/run.sh), not recreated.
#   GATEWAY_BENCH_USERS=FILE  the tokens are minted for these user ids (one
#            UUID a line; the balance phase reads over all of them) instead of
#            32 fresh ones.
# Prints requests/s, p50 and p99 for both. wrk is pinned to CPU 1; the three
# services and PostgreSQL are not pinned. Bench rows go to their own
# databases (gateway_bench_points, gateway_bench_payments), recreated per run
# unless GATEWAY_BENCH_KEEP_DATABASES=1. GATEWAY_BENCH_SERVICES_BIN=DIR runs
# the three services from DIR (release binaries of another revision, as
# bench/gateway/ab.sh builds them) with this tree's load generators.
# Bounded: each phase is a fixed number of seconds, every step has a timeout;
# < 3 minutes after the build.
#
# Usage: bench/gateway/run.sh [seconds-per-phase=10] [connections=16] [verify-transactions=20000]
# Results also go to bench/out/gateway-<timestamp>.txt (ignored by git).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
# The project's Debian packages and PostgreSQL (quick when all are there).
"$root/scripts/install-deps.sh" >&2
seconds="${1:-10}"
connections="${2:-16}"
transactions="${3:-20000}"
[[ "$seconds" =~ ^[0-9]+$ ]] && ((seconds >= 1 && seconds <= 60)) || { echo "seconds-per-phase must be 1...60" >&2; exit 2; }
[[ "$connections" =~ ^[0-9]+$ ]] && ((connections >= 1 && connections <= 256)) || { echo "connections must be 1...256" >&2; exit 2; }
[[ "$transactions" =~ ^[0-9]+$ ]] && ((transactions >= 1 && transactions <= 200000)) || { echo "verify-transactions must be 1...200000" >&2; exit 2; }
# At least two users per connection: wrk sends the balance phase's tokens in
# order, so the reads in flight at once are of distinct users (coalesced
# reads of one user would share a row and flatter the rate).
tokens=$((connections * 2 > 32 ? connections * 2 : 32))
load_cpu=1
bundle_id="com.meeyao.qianwen"
databases="${GATEWAY_BENCH_DATABASES:-gateway_bench}"
[[ "$databases" =~ ^[a-z][a-z0-9_]{0,40}$ ]] || { echo "GATEWAY_BENCH_DATABASES must be a lower-case name" >&2; exit 2; }
points_db="${databases}_points"
payments_db="${databases}_payments"
pgbench_db="${databases}_pgbench"
users_file="${GATEWAY_BENCH_USERS:-}"
phases="${GATEWAY_BENCH_PHASES:-all}"
[[ "$phases" == all || "$phases" == balance ]] || { echo "GATEWAY_BENCH_PHASES must be all or balance" >&2; exit 2; }
[[ "$phases" == all ]] || transactions=2
[[ -z "$users_file" || -s "$users_file" ]] || { echo "GATEWAY_BENCH_USERS: no such file or empty: $users_file" >&2; exit 2; }

"$root/scripts/apt-install.sh" wrk
for tool in wrk curl psql taskset; do
  command -v "$tool" >/dev/null || { echo "missing tool: $tool" >&2; exit 2; }
done
[[ $(getconf _NPROCESSORS_ONLN) -ge 2 ]] || { echo "needs 2 CPUs (wrk pinned to CPU 1)" >&2; exit 2; }

echo "building Gateway, PaymentsService, PointsService, GatewayBench (release)" >&2
for product in Gateway PaymentsService PointsService GatewayBench SagaBench; do
  timeout 900 "$root/scripts/build-release.sh" --product "$product" --package-path "$root" >/dev/null \
    || { echo "build of $product failed (scripts/build-release.sh --product $product)" >&2; exit 1; }
done
bin="$root/.build/release"
services_bin="${GATEWAY_BENCH_SERVICES_BIN:-$bin}"
for product in Gateway PaymentsService PointsService; do
  [[ -x "$services_bin/$product" ]] || { echo "GATEWAY_BENCH_SERVICES_BIN: no $product in $services_bin" >&2; exit 2; }
done

eval "$(timeout 120 "$root/scripts/pg.sh" start)"
psql_admin=(env PGOPTIONS=-cclient_min_messages=warning psql -h 127.0.0.1 -p "$PG_PORT" -U iap -v ON_ERROR_STOP=1 -qAt -d postgres)
recreated=("$pgbench_db")
[[ "${GATEWAY_BENCH_KEEP_DATABASES:-0}" == 1 ]] || recreated+=("$points_db" "$payments_db")
for db in "${recreated[@]}"; do
  timeout 60 "${psql_admin[@]}" -c "drop database if exists $db" -c "create database $db"
done
trace_statements="${GATEWAY_BENCH_STATEMENTS:-0}"
perf_dir="${GATEWAY_BENCH_PERF:-}"
if [[ "$trace_statements" == 1 ]]; then
  for db in "$points_db" "$payments_db"; do
    timeout 60 "${psql_admin[@]}" -c "alter database $db set log_statement = 'all'"
  done
fi
if [[ -n "$perf_dir" ]]; then
  command -v perf >/dev/null || { echo "GATEWAY_BENCH_PERF needs perf" >&2; exit 2; }
  mkdir -p "$perf_dir"
fi

work="$(mktemp -d)"
pids=()
declare -A service_pid
stop_services() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  pids=()
}
trap 'status=$?; stop_services; rm -rf "$work"; ((status == 0)) || echo "bench/gateway/run.sh: failed (exit $status)" >&2' EXIT

echo "signing $transactions fresh transactions" >&2
timeout 300 "$bin/GatewayBench" --out "$work" --count "$transactions" --bundle-id "$bundle_id" >/dev/null
# A second, separate set for the direct saga phase (PaymentsService over gRPC).
timeout 300 "$bin/GatewayBench" --out "$work/saga" --count "$transactions" --bundle-id "$bundle_id" >/dev/null

# start NAME ENV... -- : runs $services_bin/NAME with --listen 127.0.0.1:0 (Gateway: LISTEN_ADDR), sets $address.
start() {
  local name="$1"; shift
  env ADMIN_LISTEN_ADDR=127.0.0.1:0 "$@" "$services_bin/$name" > "$work/$name.out" 2> "$work/$name.err" &
  pids+=($!)
  service_pid[$name]=$!
  address=""
  for _ in $(seq 1 300); do
    address="$(sed -n '/ admin listening on /!s/^.*listening on //p' "$work/$name.out" 2>/dev/null | head -1)"
    [[ -n "$address" ]] && return 0
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.05
  done
  echo "$name did not start:" >&2; cat "$work/$name.err" >&2; exit 1
}
# INTERNAL_AUTH=off: the benchmark measures the services on cleartext loopback
# (SagaBench calls PaymentsService directly, without a certificate).
start PointsService DATABASE_URL="postgresql://iap@127.0.0.1:$PG_PORT/$points_db" LOG_LEVEL=warning \
  PACKAGES_FILE="$root/config/packages.json" LISTEN_ADDR=127.0.0.1:0 INTERNAL_AUTH=off
points_address="$address"
start PaymentsService DATABASE_URL="postgresql://iap@127.0.0.1:$PG_PORT/$payments_db" LOG_LEVEL=warning \
  POINTS_ADDR="$points_address" LISTEN_ADDR=127.0.0.1:0 APPLE_BUNDLE_ID="$bundle_id" APPLE_ENVIRONMENTS=Sandbox \
  APPLE_ROOT_CERTS="$work/root.der,$work/saga/root.der" APPLE_ONLINE_CHECKS=0 INTERNAL_AUTH=off
payments_address="$address"
jwt_secret="$(head -c 48 /dev/urandom | base64 | tr -d '\n')"
email_secret="$(head -c 48 /dev/urandom | base64 | tr -d '\n')"
gateway_env=(JWT_HS256_SECRET="$jwt_secret" JWT_ISSUER=iap-bench JWT_AUDIENCE=iap-bench-app EMAIL_HASH_SECRET="$email_secret" POINTS_ADDR="$points_address"
             PAYMENTS_ADDR="$payments_address" LOG_LEVEL=warning INTERNAL_AUTH=off)
start Gateway "${gateway_env[@]}" LISTEN_ADDR=127.0.0.1:0
gateway_address="$address"
# Purchase rows are counted from here on (a kept database may hold millions; seq is indexed).
ledger_from="$(timeout 30 "${psql_admin[@]}" -d "$points_db" -c "select coalesce(max(seq), 0) from points_ledger")"
base="http://$gateway_address"

if [[ -n "$users_file" ]]; then
  mapfile -t users < <(head -n 1000 "$users_file")
else
  users=()
  for _ in $(seq 1 "$tokens"); do users+=("$(cat /proc/sys/kernel/random/uuid)"); done
fi
: > "$work/tokens"
for i in "${!users[@]}"; do
  user="${users[$i]}"
  timeout 10 env "${gateway_env[@]}" "$services_bin/Gateway" mint-token --sub "$user" --email "bench$i@example.com" --ttl 3600 >> "$work/tokens" \
    || { echo "Gateway mint-token failed" >&2; exit 1; }
done
first_token="$(head -1 "$work/tokens")"
# Fresh databases hold no account for the bench users, a kept (prefilled) one does:
# each gets a zero account (balance = ledger sum = lots = 0), so the balance phase
# reads real rows on both, as production does.
if [[ "${GATEWAY_BENCH_KEEP_DATABASES:-0}" != 1 ]]; then
  timeout 30 "${psql_admin[@]}" -d "$points_db" -c "insert into user_points (user_id) select unnest('{$(IFS=,; echo "${users[*]}")}'::uuid[]) on conflict (user_id) do nothing" >/dev/null
fi

# One checked call of each route before the load.
# curl's own failures (exit != 0, status 000) are reported by the checks, not by set -e.
balance_status=000
for _ in $(seq 1 20); do
  balance_status="$(curl -s --max-time 10 -o "$work/balance.json" -w '%{http_code}' -H "Authorization: Bearer $first_token" \
    "$base/api/v1/points/balance" || true)"
  [[ "$balance_status" == 000 ]] || break
  sleep 0.2
done
[[ "$balance_status" == 200 ]] || { echo "balance check: HTTP $balance_status $(head -c 300 "$work/balance.json" 2>/dev/null)" >&2; cat "$work"/*.err >&2; exit 1; }
tail -n 1 "$work/bodies.jsonl" > "$work/check-body.json"
head -n -1 "$work/bodies.jsonl" > "$work/load-bodies.jsonl"
verify_status="$(curl -s --max-time 30 -o "$work/verify.json" -w '%{http_code}' -H "Authorization: Bearer $first_token" \
  -H 'Content-Type: application/json' --data-binary @"$work/check-body.json" "$base/api/v1/payments/apple/transactions/verify" || true)"
[[ "$verify_status" == 200 ]] && grep -q '"status":"granted"' "$work/verify.json" \
  || { echo "verify check: HTTP $verify_status $(head -c 300 "$work/verify.json" 2>/dev/null)" >&2; cat "$work"/*.err >&2; exit 1; }

if [[ "$trace_statements" == 1 ]]; then
  pg_log="${IAP_DATA_DIR:-$root/.data}/pg.log"
  sleep 0.5
  from=$(($(stat -c %s "$pg_log") + 1))
  head -n 1 "$work/load-bodies.jsonl" > "$work/trace-body.json"
  verify_status="$(curl -s --max-time 30 -o "$work/verify.json" -w '%{http_code}' -H "Authorization: Bearer $(sed -n 2p "$work/tokens")" \
    -H 'Content-Type: application/json' --data-binary @"$work/trace-body.json" "$base/api/v1/payments/apple/transactions/verify" || true)"
  sleep 1.5
  echo "second verify: HTTP $verify_status $(head -c 200 "$work/verify.json")"
  echo "statements the cluster logged for it (log_statement=all on both bench databases; [pid] = one connection):"
  tail -c +"$from" "$pg_log" | grep -E 'LOG:  (statement|execute)' | sed 's/^[0-9-]* [0-9:.]* [A-Z]* //'
  exit 0
fi

# sample: "ticks switches" for Gateway, PaymentsService, PointsService and the cluster, then the next xid, the WAL position and the full-page image count.
postgres_pids() {
  local postmaster
  postmaster="$(head -1 "${IAP_DATA_DIR:-$root/.data}/pg/postmaster.pid" 2>/dev/null)" || return 0
  echo "$postmaster"; pgrep -P "$postmaster" 2>/dev/null || true
}
proc_usage() { # PID...: "ticks switches" summed
  local pid ticks=0 switches=0 fields v
  for pid in "$@"; do
    fields="$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null)" || continue
    read -r -a parts <<< "$fields"
    # Every thread's switches (the process's own status line counts only its main thread).
    v="$(cat /proc/"$pid"/task/*/status 2>/dev/null | awk '/^(non)?voluntary_ctxt_switches:/ {n += $2} END {print n + 0}')"
    ticks=$((ticks + parts[11] + parts[12])); switches=$((switches + ${v:-0}))
  done
  echo "$ticks $switches"
}
sample() {
  local name pid
  for name in Gateway PaymentsService PointsService; do
    pid="${service_pid[$name]}"; printf '%s ' "$(proc_usage "$pid")"
  done
  # shellcheck disable=SC2046
  printf '%s ' "$(proc_usage $(postgres_pids))"
  # The next transaction id: its delta counts the cluster's write transactions (read-only ones take none);
  # the WAL position: its delta is the WAL written; and the full-page images written (pg_stat_wal.wal_fpi).
  timeout 10 "${psql_admin[@]}" -c "select pg_snapshot_xmax(pg_current_snapshot()) || ' ' || (pg_current_wal_lsn() - '0/0')::bigint
    || ' ' || (select wal_fpi from pg_stat_wal)"
}
# per_request BEFORE AFTER COUNT: CPU ms and context switches per request per process, write transactions (xids), WAL bytes and full-page images.
per_request() {
  awk -v count="$3" -v hz="$(getconf CLK_TCK)" -v before="$1" -v after="$2" 'BEGIN {
    split(before, b, " "); split(after, a, " "); split("gateway payments points postgres", names, " ")
    line = ""; cpu = 0
    for (i = 1; i <= 4; i++) {
      ms = (a[2*i-1] - b[2*i-1]) * 1000 / hz / count; cpu += ms
      line = line sprintf("%s %.3f ms %.1f cs; ", names[i], ms, (a[2*i] - b[2*i]) / count)
    }
    printf "%s total %.3f ms CPU; write transactions %.2f; WAL %.0f bytes, %.2f full-page images", line, cpu, (a[9] - b[9]) / count,
      (a[10] - b[10]) / count, (a[11] - b[11]) / count
  }'
}
# balance_call_totals: "sum count alone gw_seconds gw_calls pts_seconds pts_calls": the Gateway's
# iap_gateway_balance_reads_per_call and its GetBalance calls (reads alone), then the GetBalances
# call durations as the Gateway (client) and PointsService (server) count them, from their admin
# /metrics; nothing when the gateway does not export the first.
balance_call_totals() {
  local gateway_admin points_admin
  gateway_admin="$(sed -n 's/^.* admin listening on \([0-9.]*:[0-9]*\).*/\1/p' "$work/Gateway.out" | head -1)"
  points_admin="$(sed -n 's/^.* admin listening on \([0-9.]*:[0-9]*\).*/\1/p' "$work/PointsService.out" | head -1)"
  { curl -s --max-time 5 "http://$gateway_admin/metrics" 2>/dev/null
    curl -s --max-time 5 "http://$points_admin/metrics" 2>/dev/null | sed 's/^/points:/'; } | awk '
    /^iap_gateway_balance_reads_per_call_sum / { sum = $2; found = 1 }
    /^iap_gateway_balance_reads_per_call_count / { count = $2 }
    /^iap_rpc_client_requests_total\{method="\/points.v1.Points\/GetBalance",/ { alone += $2 }
    /^iap_rpc_client_request_duration_seconds_sum\{method="\/points.v1.Points\/GetBalances"\}/ { gws = $2 }
    /^iap_rpc_client_request_duration_seconds_count\{method="\/points.v1.Points\/GetBalances"\}/ { gwn = $2 }
    /^points:iap_rpc_server_request_duration_seconds_sum\{method="\/points.v1.Points\/GetBalances"\}/ { pts = $2 }
    /^points:iap_rpc_server_request_duration_seconds_count\{method="\/points.v1.Points\/GetBalances"\}/ { ptn = $2 }
    END { if (found) printf "%s %s %s %s %s %s %s\n", sum + 0, count + 0, alone + 0, gws + 0, gwn + 0, pts + 0, ptn + 0 }'
}
# balance_per_call BEFORE AFTER REQUESTS: GetBalances calls, users per call and reads alone between two balance_call_totals.
balance_per_call() {
  [[ -n "$1" && -n "$2" ]] || { echo "not exported by this gateway"; return 0; }
  awk -v before="$1" -v after="$2" -v requests="$3" 'BEGIN {
    split(before, b, " "); split(after, a, " ")
    calls = a[2] - b[2]; users = a[1] - b[1]; alone = a[3] - b[3]
    printf "%d GetBalances calls, %.2f users per call; %d of the %d requests went alone (GetBalance, %.1f %%)",
      calls, (calls > 0 ? users / calls : 0), alone, requests, (requests > 0 ? 100 * alone / requests : 0)
    gwn = a[5] - b[5]; ptn = a[7] - b[7]
    if (gwn > 0 && ptn > 0)
      printf "; a GetBalances call took %.0f us as the gateway saw it, %.0f us inside PointsService",
        1e6 * (a[4] - b[4]) / gwn, 1e6 * (a[6] - b[6]) / ptn }'
}
# saga_commit_totals: "first_sight_sum first_sight_count step_result_sum step_result_count" of
# PaymentsService's iap_saga_writes_per_commit (its admin /metrics), or nothing when it does not export it.
saga_commit_totals() {
  local admin
  admin="$(sed -n 's/^.* admin listening on \([0-9.]*:[0-9]*\).*/\1/p' "$work/PaymentsService.out" | head -1)"
  curl -s --max-time 5 "http://$admin/metrics" 2>/dev/null | awk '
    /^iap_saga_writes_per_commit_(sum|count)\{statement="(first_sight|step_result)"\}/ {
      split($1, parts, "\""); kind = ($1 ~ /_sum\{/) ? "sum" : "count"; value[parts[2] " " kind] = $2; found = 1 }
    END { if (found) printf "%s %s %s %s\n", value["first_sight sum"] + 0, value["first_sight count"] + 0,
                                              value["step_result sum"] + 0, value["step_result count"] + 0 }'
}
# saga_per_commit BEFORE AFTER: mean purchases per statement of steps 1 and 3 between two saga_commit_totals.
saga_per_commit() {
  [[ -n "$1" && -n "$2" ]] || { echo "not exported by these services"; return 0; }
  awk -v before="$1" -v after="$2" 'BEGIN {
    split(before, b, " "); split(after, a, " ")
    n1 = a[2] - b[2]; n3 = a[4] - b[4]
    printf "step 1 (insert) %.2f purchases per statement (%d statements), step 3 (guarded update) %.2f (%d)",
      (n1 > 0 ? (a[1] - b[1]) / n1 : 0), n1, (n3 > 0 ? (a[3] - b[3]) / n3 : 0), n3 }'
}
ledger_rows() {
  timeout 30 "${psql_admin[@]}" -d "$points_db" -c "select count(*) from points_ledger where change_type = 'purchase' and seq > $ledger_from"
}
# wrk_requests NAME: the completed requests wrk counted.
wrk_requests() { sed -n 's/^\s*\([0-9]*\) requests in .*/\1/p' "$work/$1.wrk"; }

# stall_watch_start NAME / stall_watch_end NAME: bench/disk/stall-watch.py over
# the phase (it reads /proc/diskstats, no I/O of its own): the disk's stalls
# that a commit's fsync waited out, so a report says whether a verify p99 over
# 50 ms was the disk's (PERFORMANCE.md, "Session 16").
stall_watch_start() {
  timeout $((seconds + 30)) python3 "$root/bench/disk/stall-watch.py" $((seconds + 1)) "${IAP_DATA_DIR:-$root/.data}" \
    > "$work/$1.stalls" 2> "$work/$1.stalls.log" &
  echo $! > "$work/$1.stalls.pid"
}
stall_watch_end() {
  local pid
  pid="$(cat "$work/$1.stalls.pid")"
  kill "$pid" 2>/dev/null || true
  # Called in $(...), a subshell that cannot wait for it: poll until it is gone.
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  cat "$work/$1.stalls"
}
# perf_start PHASE / perf_stop (GATEWAY_BENCH_PERF): system-wide (PostgreSQL
# forks backends while the pools grow) into DIR/PHASE.data; the processes'
# pids in DIR/PHASE.pids, to split with perf report --pid or perf script.
perf_pid=""
perf_phase=""
perf_start() {
  [[ -n "$perf_dir" ]] || return 0
  perf_phase="$1"
  local graph=(-g -F 499)
  [[ "${GATEWAY_BENCH_PERF_DWARF:-0}" != 1 ]] || graph=(--call-graph dwarf,32768 -F 199)
  if [[ "${GATEWAY_BENCH_PERF_SCHED:-0}" == 1 ]]; then
    # 64 MiB of buffer per CPU holds the half second, so perf does not wake
    # to drain it in the middle of the trace.
    { sleep $((seconds / 2))
      perf record -q -a -m 16384 -e sched:sched_switch -e sched:sched_wakeup -e raw_syscalls:sys_enter \
        -e raw_syscalls:sys_exit -o "$perf_dir/$1.data" -- sleep 0.5 >/dev/null 2>"$perf_dir/$1.log"; } &
  else
    timeout --signal=INT $((seconds + 2)) perf record -q -a "${graph[@]}" -o "$perf_dir/$1.data" >/dev/null 2>"$perf_dir/$1.log" &
  fi
  perf_pid=$!
}
perf_stop() {
  [[ -n "$perf_pid" ]] || return 0
  wait "$perf_pid" 2>/dev/null || true
  perf_pid=""
  { for name in Gateway PaymentsService PointsService; do echo "$name ${service_pid[$name]}"; done
    echo "postgres $(postgres_pids | paste -sd,)"; } > "$perf_dir/$perf_phase.pids"
}

# save_metrics PHASE (GATEWAY_BENCH_METRICS): each service's admin /metrics into DIR/PHASE-NAME.prom.
metrics_dir="${GATEWAY_BENCH_METRICS:-}"
[[ -z "$metrics_dir" ]] || mkdir -p "$metrics_dir"
save_metrics() {
  [[ -n "$metrics_dir" ]] || return 0
  local name admin
  for name in Gateway PaymentsService PointsService; do
    admin="$(sed -n 's/^.* admin listening on \([0-9.]*:[0-9]*\).*/\1/p' "$work/$name.out" | head -1)"
    curl -s --max-time 5 "http://$admin/metrics" > "$metrics_dir/$1-$name.prom" || true
  done
}
# wrk_run NAME ARGS...: wrk --latency pinned, output in $work/NAME.wrk.
wrk_run() {
  local name="$1"; shift
  timeout $((seconds + 60)) taskset -c "$load_cpu" wrk -t 1 -c "$connections" -d "${seconds}s" --timeout 10s --latency "$@" \
    > "$work/$name.wrk" 2>&1 || { echo "wrk $name failed:" >&2; cat "$work/$name.wrk" >&2; exit 1; }
}
# summary NAME: "rps p50 p99 non2xx errors" from wrk's output.
summary() {
  local file="$work/$1.wrk"
  printf '%s %s %s %s %s\n' \
    "$(sed -n 's/^Requests\/sec:\s*\([0-9.]*\).*/\1/p' "$file")" \
    "$(awk '$1 == "50%" {print $2}' "$file")" "$(awk '$1 == "99%" {print $2}' "$file")" \
    "$(sed -n 's/^\s*Non-2xx or 3xx responses:\s*\([0-9]*\).*/\1/p' "$file" | grep . || echo 0)" \
    "$(sed -n 's/^\s*Socket errors:\s*\(.*\)/\1/p' "$file" | tr -d ' ' | grep . || echo none)"
}

# --- the balance phase between two runs of its reference, `pgbench -S` ---
echo "pgbench -S before the balance phase: ${seconds}s, $connections clients" >&2
timeout 300 pgbench -h 127.0.0.1 -p "$PG_PORT" -U iap -i -s 1 -q "$pgbench_db" > "$work/pgbench-init.out" 2>&1 \
  || { echo "pgbench -i failed:" >&2; cat "$work/pgbench-init.out" >&2; exit 1; }
# latency_percentiles FILE...: "p50 X ms, p99 Y ms, max Z ms" over pgbench
# transaction logs (-l; the third field is the latency in microseconds).
latency_percentiles() {
  cat "$@" | awk '{ print $3 }' | sort -n | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "no transactions logged"; exit }
    printf "p50 %.2f ms, p99 %.2f ms, max %.1f ms", v[int(NR * 0.5) + 1] / 1000, v[int(NR * 0.99) + 1] / 1000, v[NR] / 1000 }'
}
# pgbench_tps NAME ARGS...: tps of one pgbench run, pinned to CPU 1.
pgbench_tps() {
  local name="$1"; shift
  (cd "$work" && timeout $((seconds + 60)) taskset -c "$load_cpu" pgbench -h 127.0.0.1 -p "$PG_PORT" -U iap -n -M prepared \
      -c "$connections" -j 1 -T "$seconds" "$@" "$pgbench_db" > "pgbench-$name.out" 2>&1) \
    || { echo "pgbench $name failed:" >&2; cat "$work/pgbench-$name.out" >&2; exit 1; }
  sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$work/pgbench-$name.out" | head -1
}
pgbench_select_before="$(pgbench_tps select-before -S)"
echo "balance: ${seconds}s, $connections connections (no warm-up: the verify check call above warmed the path)" >&2
perf_start balance
balance_before="$(sample)"
balance_calls_before="$(balance_call_totals)"
GATEWAY_BENCH_TOKENS="$work/tokens" wrk_run balance -s "$root/bench/gateway/balance.lua" "$base/api/v1/points/balance"
balance_cost="$(per_request "$balance_before" "$(sample)" "$(wrk_requests balance)")"
balance_calls="$(balance_per_call "$balance_calls_before" "$(balance_call_totals)" "$(wrk_requests balance)")"
perf_stop
save_metrics balance
echo "pgbench -S after the balance phase: ${seconds}s, $connections clients" >&2
pgbench_select_after="$(pgbench_tps select-after -S)"
verify_rows=0 verify_cost="" saga_commits="" saga_line="" verify_stalls="" purchase_stalls=""
if [[ "$phases" == all ]]; then
echo "verify: ${seconds}s, $connections connections, $((transactions - 1)) fresh transactions" >&2
perf_start verify
stall_watch_start verify
verify_rows_before="$(ledger_rows)"
verify_before="$(sample)"
saga_commits_before="$(saga_commit_totals)"
GATEWAY_BENCH_BODIES="$work/load-bodies.jsonl" GATEWAY_BENCH_TOKENS="$work/tokens" GATEWAY_BENCH_THREADS=1 \
  wrk_run verify -s "$root/bench/gateway/verify.lua" "$base/api/v1/payments/apple/transactions/verify"
verify_after="$(sample)"
verify_stalls="$(stall_watch_end verify)"
saga_commits="$(saga_per_commit "$saga_commits_before" "$(saga_commit_totals)")"
verify_rows=$(($(ledger_rows) - verify_rows_before))
verify_cost="$(per_request "$verify_before" "$verify_after" "$verify_rows")"
perf_stop
save_metrics verify
echo "saga: ${seconds}s, $connections concurrent VerifyTransaction calls straight to PaymentsService" >&2
saga_line="$(timeout $((seconds + 60)) taskset -c "$load_cpu" "$bin/SagaBench" --target "$payments_address" --bodies "$work/saga/bodies.jsonl" \
  --concurrency "$connections" --seconds "$seconds")" || { echo "SagaBench failed" >&2; cat "$work"/*.err >&2; exit 1; }
fi
# --- references: pgbench on the same cluster, same client count, pinned like wrk ---
[[ "$phases" != all ]] || echo "pgbench reference: the purchase script, ${seconds}s, $connections clients" >&2
if [[ "$phases" == all ]]; then
timeout 60 "${psql_admin[@]}" -d "$pgbench_db" <<'SQL'
create table ref_payments (
  id uuid primary key default gen_random_uuid(), user_id uuid, transaction_id text not null unique, status text not null,
  credits bigint not null, signed_transaction_info text not null, pending_action text, next_attempt_at timestamptz,
  ledger_event_id text, attempt_count int not null default 0, created_at timestamptz not null default now(),
  updated_at timestamptz not null default now());
create index ref_payments_user_created on ref_payments (user_id, created_at desc);
create index ref_payments_due on ref_payments (next_attempt_at) where pending_action is not null;
create table ref_accounts (user_id uuid primary key, balance bigint not null, lifetime_earned bigint not null,
  updated_at timestamptz not null default now());
create table ref_ledger (id bigserial primary key, user_id uuid not null, event_id text not null unique, amount bigint not null,
  balance_after bigint not null, biz_id text not null, request_fingerprint text not null, metadata jsonb not null,
  created_at timestamptz not null default now());
create index ref_ledger_user_created on ref_ledger (user_id, created_at desc);
create table ref_lots (id bigserial primary key, user_id uuid not null, source_event_id text not null unique,
  credited bigint not null, remaining bigint not null);
SQL
# One purchase's database work as logged (GATEWAY_BENCH_STATEMENTS=1, see
# PERFORMANCE.md): step 1 = one autocommitted insert ... on conflict do
# nothing returning, in the claimed state; the Grant = one autocommitted
# statement (account upsert + ledger row + lot); step 3 = one autocommitted
# update guarded by the state it was decided on. 3 commits, 3 statements
# (round trips), in one connection (the services use two databases and
# several connections; WAL and fsync are the cluster's).
cat > "$work/purchase.sql" <<'SCRIPT'
\set user random(1, 1000000)
insert into ref_payments (user_id, transaction_id, status, credits, signed_transaction_info, pending_action, next_attempt_at)
  values (md5(:user::text)::uuid, gen_random_uuid()::text, 'verified', 100, repeat('x', 1500), 'grant', now() + interval '30 seconds')
  on conflict (transaction_id) do nothing returning transaction_id \gset
with account as (
  insert into ref_accounts as account (user_id, balance, lifetime_earned) values (md5(:user::text)::uuid, 100, 100)
  on conflict (user_id) do update set balance = account.balance + 100, lifetime_earned = account.lifetime_earned + 100, updated_at = now()
  returning balance
), entry as (
  insert into ref_ledger (user_id, event_id, amount, balance_after, biz_id, request_fingerprint, metadata)
  select md5(:user::text)::uuid, 'purchase:' || :transaction_id::text, 100, account.balance, :transaction_id::text, md5(:transaction_id::text),
         jsonb_build_object('transaction_id', :transaction_id::text, 'product_code', 'starter') from account
  returning id, balance_after
), lot as (
  insert into ref_lots (user_id, source_event_id, credited, remaining)
  select md5(:user::text)::uuid, 'purchase:' || :transaction_id::text, 100, 100 from entry
)
select id, balance_after from entry;
update ref_payments set status = 'granted', pending_action = null, next_attempt_at = null, ledger_event_id = 'purchase:' || :transaction_id::text,
  updated_at = now()
  where transaction_id = :transaction_id::text and status = 'verified' and pending_action = 'grant' and credits = 100
  returning id, status;
SCRIPT
fi
pgbench_select="$(awk -v a="$pgbench_select_before" -v b="$pgbench_select_after" 'BEGIN { printf "%.1f", (a + b) / 2 }')"
pgbench_purchase=0 pgbench_purchase_latency=""
outcomes="" first_other=""
if [[ "$phases" == all ]]; then
  stall_watch_start purchase
  pgbench_purchase="$(pgbench_tps purchase -f purchase.sql -l --log-prefix=purchase-latency)"
  purchase_stalls="$(stall_watch_end purchase)"
  pgbench_purchase_latency="$(latency_percentiles "$work"/purchase-latency.*)"
  outcomes="$(grep '^verify_outcomes' "$work/verify.wrk" || true)"
  first_other="$(grep '^verify_first_other' "$work/verify.wrk" || true)"
fi
credited="$(ledger_rows 2>/dev/null || echo '?')"
# psql_admin ends with -d postgres; a second -d wins in psql.

out_dir="$root/bench/out"
mkdir -p "$out_dir"
report="$out_dir/gateway-$(date -u +%Y%m%dT%H%M%SZ).txt"
{
  echo "Gateway over the whole system: $(date -u +%FT%TZ), $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1))"
  echo "wrk -t1 -c$connections -d${seconds}s --latency on CPU $load_cpu; services and PostgreSQL unpinned; fsync=on synchronous_commit=on"
  printf '%-8s %12s %10s %10s %8s %s\n' route "requests/s" p50 p99 non-2xx "socket errors"
  read -r rps p50 p99 non2xx errors <<< "$(summary balance)"
  printf '%-8s %12s %10s %10s %8s %s\n' balance "$rps" "$p50" "$p99" "$non2xx" "$errors"
  if [[ "$phases" == all ]]; then
    read -r rps p50 p99 non2xx errors <<< "$(summary verify)"
    printf '%-8s %12s %10s %10s %8s %s\n' verify "$rps" "$p50" "$p99" "$non2xx" "$errors"
    echo "verify answers: ${outcomes#verify_outcomes }; purchase ledger rows in PointsService: $credited"
    echo "  (the disk during the verify phase: ${verify_stalls:-not watched})"
  fi
  printf '%-34s %12s\n' reference "per second"
  printf '%-34s %12s\n' "pgbench -S -M prepared (select)" "$pgbench_select"
  printf '  (the mean of %s before and %s after the balance phase)\n' "${pgbench_select_before%.*}" "${pgbench_select_after%.*}"
  if [[ "$phases" == all ]]; then
    printf '%-34s %12s\n' "pgbench purchase.sql (3 commits, 3 statements)" "$pgbench_purchase"
    # The disk's stalls (a commit waits for its fsync) reach the reference too,
    # in its maximum more than its p99: it runs more transactions in the same
    # time, so the same stalls are a smaller share of them (PERFORMANCE.md,
    # "Session 15"). A verify p99 over 50 ms beside a maximum as high is the disk's.
    echo "  (its latency, each transaction from pgbench's log: $pgbench_purchase_latency)"
    echo "  (the disk during it: ${purchase_stalls:-not watched})"
  fi
  read -r balance_rps _ <<< "$(summary balance)"
  awk -v b="$balance_rps" -v p="$pgbench_select" 'BEGIN { printf "balance / pgbench -S = %.2f (goal >= 0.50)\n", (p > 0 ? b / p : 0) }'
  if [[ "$phases" == all ]]; then
    read -r verify_rps _ <<< "$(summary verify)"
    awk -v v="$verify_rps" -v p="$pgbench_purchase" 'BEGIN { printf "verify / pgbench purchase.sql = %.2f\n", (p > 0 ? v / p : 0) }'
  fi
  echo "per balance request: $balance_cost"
  echo "coalesced balance reads: $balance_calls"
  if [[ "$phases" == all ]]; then
    echo "per purchase (verify phase, per purchase ledger row written: $verify_rows): $verify_cost"
    echo "group commit in the verify phase: $saga_commits"
    echo "saga (VerifyTransaction over gRPC, no gateway, new user each): $saga_line"
    [[ -n "$first_other" ]] && echo "first unexpected verify answer: ${first_other#verify_first_other }"
  fi
  true
} | tee "$report"
