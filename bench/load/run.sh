#!/usr/bin/env bash
# Load test and soak over the whole system: one release Gateway,
# PaymentsService and PointsService on the private PostgreSQL cluster,
# mutual TLS between them (as deployed), wrk pinned to CPU 1. Reuses
# bench/gateway's pieces: GatewayBench's pre-signed fresh StoreKit 2
# transactions (throw-away local PKI trusted through APPLE_ROOT_CERTS) and
# bench/gateway/verify.lua (each body sent once, every answer checked),
# through bench/load/measure.lua, which adds p99.9 and pacing.
#
#   bench/load/run.sh [load] [seconds-per-step=8] [connections="1 4 16 64 128"]
#     For each route (verify with distinct purchases, GET balance) and each
#     connection count: requests/s, p50/p99/p99.9, non-2xx, and the CPU of
#     each process (utime+stime from /proc/<pid>/stat before and after the
#     step, % of one CPU; postgres = the postmaster and all its children).
#     A step gaining < 10% requests/s over the previous one is marked
#     "saturated"; a route stops after two such steps. Fails (exit 1) on
#     any non-2xx, socket error, a verify answer other than "granted" (a
#     replay included) or a reused body.
#   bench/load/run.sh soak [minutes=10]
#     A steady rate well below saturation for MINUTES: verify at <= 40/s
#     (4 connections, 100 ms pause each) and balance at <= 200/s (4
#     connections, 20 ms pause), sampling every 10 s the RSS and open file
#     descriptors of the Gateway, PaymentsService and PointsService (and, for
#     information, PostgreSQL's private memory and process count). After a
#     60 s warm-up, the highest of the last three samples may exceed the
#     highest of the first three by at most 16 MiB + 10% RSS and 8 file
#     descriptors per service; more fails the run (exit 1), as does any
#     failed request.
#     SOAK_MUTATE=leak adds a sampled process that grows by 2 MiB and one
#     descriptor a second for 5 minutes (it must fail).
#     LOAD_MUTATE=replay (load mode) sends the first verify step's bodies
#     again in the second step (it must fail).
# Bounded: every step and wait has a timeout; load mode is about
# 2 x steps x (seconds + 3) s, soak MINUTES + 1 min, after the build.
# Bench rows go to their own databases (load_points, load_payments),
# recreated per run. Reports also go to bench/out/load-<timestamp>.txt.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
# The project's Debian packages and PostgreSQL (quick when all are there).
"$root/scripts/install-deps.sh" >&2
mode="load"
if [[ "${1:-}" == load || "${1:-}" == soak ]]; then mode="$1"; shift; fi
if [[ "$mode" == load ]]; then
  seconds="${1:-8}"
  steps="${2:-1 4 16 64 128}"
  [[ "$seconds" =~ ^[0-9]+$ ]] && ((seconds >= 2 && seconds <= 60)) || { echo "seconds-per-step must be 2...60" >&2; exit 2; }
  for c in $steps; do [[ "$c" =~ ^[0-9]+$ ]] && ((c >= 1 && c <= 512)) || { echo "connections must be 1...512" >&2; exit 2; }; done
  # Distinct bodies per step: enough for 2,500 verifies/s. Since the saga's
  # group commit (session 8) 2 CPUs do up to about 1,700/s at 64 connections,
  # and a step that runs out resends bodies, which counts as a failure.
  per_step=$((seconds * 2500))
  transactions=$((per_step * $(wc -w <<< "$steps")))
  ((transactions <= 200000)) || { echo "too many steps x seconds for distinct purchases (max 200000)" >&2; exit 2; }
else
  minutes="${1:-10}"
  [[ "$minutes" =~ ^[0-9]+$ ]] && ((minutes >= 2 && minutes <= 60)) || { echo "minutes must be 2...60" >&2; exit 2; }
  transactions=$((minutes * 60 * 40 + 1000))
fi
mutation="${LOAD_MUTATE:-}${SOAK_MUTATE:-}"
[[ "$mutation" =~ ^(|replay|leak)$ ]] || { echo "LOAD_MUTATE=replay or SOAK_MUTATE=leak" >&2; exit 2; }
load_cpu=1
tokens=32
bundle_id="com.meeyao.qianwen"
clock_ticks="$(getconf CLK_TCK)"
"$root/scripts/apt-install.sh" wrk
for tool in wrk curl psql taskset python3; do command -v "$tool" >/dev/null || { echo "missing tool: $tool" >&2; exit 2; }; done
[[ $(getconf _NPROCESSORS_ONLN) -ge 2 ]] || { echo "needs 2 CPUs (wrk pinned to CPU 1)" >&2; exit 2; }

work="$(mktemp -d)"
source "$root/bench/lib/system.sh"
leaker_pid=""
trap 'status=$?; [[ -n "$leaker_pid" ]] && kill "$leaker_pid" 2>/dev/null; bench_stop_all; rm -rf "$work"; ((status == 0)) || echo "bench/load/run.sh: FAILED (exit $status)" >&2' EXIT

bench_build PointsService PaymentsService Gateway GatewayBench
bench_pg_start
bench_recreate_databases load_points load_payments
"$root/scripts/internal-pki.sh" "$work/pki" points payments gateway >/dev/null 2>&1
pki="$work/pki"
echo "signing $transactions fresh transactions" >&2
timeout 600 "$bin/GatewayBench" --out "$work/apple" --count "$transactions" --bundle-id "$bundle_id" >/dev/null

mtls() { echo INTERNAL_AUTH=mtls TLS_CERT="$pki/$1.pem" TLS_KEY="$pki/$1.key" TLS_CLIENT_CA="$pki/ca.pem"; }
# shellcheck disable=SC2046 # mtls prints words without spaces inside
bench_start points PointsService DATABASE_URL="postgresql://iap@127.0.0.1:$PG_PORT/load_points" LOG_LEVEL=warning \
  PACKAGES_FILE="$root/config/packages.json" LISTEN_ADDR=127.0.0.1:0 $(mtls points)
points_pid="$started_pid"; points_address="$started_address"
# shellcheck disable=SC2046
bench_start payments PaymentsService DATABASE_URL="postgresql://iap@127.0.0.1:$PG_PORT/load_payments" LOG_LEVEL=warning \
  POINTS_ADDR="$points_address" LISTEN_ADDR=127.0.0.1:0 APPLE_BUNDLE_ID="$bundle_id" APPLE_ENVIRONMENTS=Sandbox \
  APPLE_ROOT_CERTS="$work/apple/root.der" APPLE_ONLINE_CHECKS=0 POINTS_TLS_CA="$pki/ca.pem" $(mtls payments)
payments_pid="$started_pid"; payments_address="$started_address"
gateway_env=(JWT_HS256_SECRET="$(bench_random_secret)" JWT_ISSUER=iap-load JWT_AUDIENCE=iap-load-app EMAIL_HASH_SECRET="$(bench_random_secret)"
             POINTS_ADDR="$points_address" PAYMENTS_ADDR="$payments_address" LOG_LEVEL=warning
             INTERNAL_AUTH=mtls BACKEND_TLS_CA_FILE="$pki/ca.pem" BACKEND_TLS_CERT="$pki/gateway.pem" BACKEND_TLS_KEY="$pki/gateway.key")
bench_start gateway Gateway "${gateway_env[@]}" LISTEN_ADDR=127.0.0.1:0
gateway_pid="$started_pid"; base="http://$started_address"
bench_mint_users "$tokens" "$work/users.tsv" "${gateway_env[@]}"
cut -f2 "$work/users.tsv" > "$work/tokens"
first_token="$(head -1 "$work/tokens")"

# One checked call of each route before the load (also the warm-up).
balance_status="$(curl -s --max-time 10 -o "$work/balance.json" -w '%{http_code}' -H "Authorization: Bearer $first_token" "$base/api/v1/points/balance" || true)"
[[ "$balance_status" == 200 ]] || { echo "balance check: HTTP $balance_status" >&2; tail -n 5 "$work"/*.err >&2; exit 1; }
tail -n 1 "$work/apple/bodies.jsonl" > "$work/check-body.json"
verify_status="$(curl -s --max-time 30 -o "$work/verify.json" -w '%{http_code}' -H "Authorization: Bearer $first_token" \
  -H 'Content-Type: application/json' --data-binary @"$work/check-body.json" "$base/api/v1/payments/apple/transactions/verify" || true)"
[[ "$verify_status" == 200 ]] && grep -q '"status":"granted"' "$work/verify.json" \
  || { echo "verify check: HTTP $verify_status $(head -c 300 "$work/verify.json")" >&2; tail -n 5 "$work"/*.err >&2; exit 1; }
head -n -1 "$work/apple/bodies.jsonl" > "$work/bodies.jsonl"

machine="$(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)), $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo), load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
out_dir="$root/bench/out"; mkdir -p "$out_dir"
report="$out_dir/load-$mode-$(date -u +%Y%m%dT%H%M%SZ).txt"

# wrk_run NAME SECONDS CONNECTIONS ARGS...: wrk --latency pinned to CPU $load_cpu into $work/NAME.wrk.
wrk_run() {
  local name="$1" duration="$2" connections="$3"; shift 3
  timeout $((duration + 60)) taskset -c "$load_cpu" wrk -t 1 -c "$connections" -d "${duration}s" --timeout 10s --latency \
    -s "$root/bench/load/measure.lua" "$@" > "$work/$name.wrk" 2>&1 || { echo "wrk $name failed:" >&2; cat "$work/$name.wrk" >&2; return 1; }
}
# wrk_field NAME: "rps p50_ms p99_ms p999_ms non2xx socket_errors" from wrk's output and measure.lua's line.
wrk_fields() {
  local file="$work/$1.wrk"
  local rps non2xx errors
  rps="$(sed -n 's/^Requests\/sec:\s*\([0-9.]*\).*/\1/p' "$file")"
  non2xx="$(sed -n 's/^\s*Non-2xx or 3xx responses:\s*\([0-9]*\).*/\1/p' "$file" | grep . || echo 0)"
  errors="$(sed -n 's/^\s*Socket errors:\s*\(.*\)/\1/p' "$file" | tr -d ' ' | grep . || echo none)"
  awk -v rps="$rps" -v non2xx="$non2xx" -v errors="$errors" '/^latency_us/ {
      split($2, a, "="); split($3, b, "="); split($4, c, "=")
      printf "%s %.2f %.2f %.2f %s %s\n", rps, a[2] / 1000, b[2] / 1000, c[2] / 1000, non2xx, errors }' "$file"
}
cpu_pids_postgres() { bench_postgres_pids | tr '\n' ' '; }
# cpu_snapshot: "gateway payments points postgres" ticks now.
cpu_snapshot() {
  echo "$(bench_cpu_ticks "$gateway_pid") $(bench_cpu_ticks "$payments_pid") $(bench_cpu_ticks "$points_pid") $(bench_cpu_ticks $(cpu_pids_postgres))"
}
failures=0

run_load() {
  local route step=0 c previous_rps=0 flat=0
  printf '%-8s %5s %10s %9s %9s %9s %7s %-14s %6s %6s %6s %6s %s\n' route conns "requests/s" "p50 ms" "p99 ms" "p99.9 ms" non-2xx "socket errors" \
    "gw %" "pay %" "pts %" "pg %" note
  for route in verify balance; do
    step=0; previous_rps=0; flat=0
    for c in $steps; do
      step=$((step + 1))
      local name="$route-$c" args=()
      if [[ "$route" == verify ]]; then
        local slice=$step
        [[ "$mutation" == replay && $step -eq 2 ]] && slice=1
        sed -n "$(((slice - 1) * per_step + 1)),$((slice * per_step))p" "$work/bodies.jsonl" > "$work/bodies-$step.jsonl"
        export GATEWAY_BENCH_BODIES="$work/bodies-$step.jsonl" GATEWAY_BENCH_TOKENS="$work/tokens" GATEWAY_BENCH_THREADS=1 \
               LOAD_ROUTE_LUA="$root/bench/gateway/verify.lua"
        args=("$base/api/v1/payments/apple/transactions/verify")
      else
        export GATEWAY_BENCH_TOKENS="$work/tokens" LOAD_ROUTE_LUA="$root/bench/gateway/balance.lua"
        args=("$base/api/v1/points/balance")
      fi
      local before after
      before="$(cpu_snapshot)"
      wrk_run "$name" "$seconds" "$c" "${args[@]}"
      after="$(cpu_snapshot)"
      local rps p50 p99 p999 non2xx errors note=""
      read -r rps p50 p99 p999 non2xx errors <<< "$(wrk_fields "$name")"
      if [[ "$route" == verify ]]; then
        local outcomes; outcomes="$(grep '^verify_outcomes' "$work/$name.wrk" || echo 'verify_outcomes missing')"
        if ! grep -q 'already_granted=0 other=0 reused_bodies=0' <<< "$outcomes"; then
          failures=$((failures + 1)); note="FAIL ${outcomes#verify_outcomes } $(grep '^verify_first_other' "$work/$name.wrk" | cut -c1-120 || true)"
        fi
      fi
      if [[ "$non2xx" != 0 || "$errors" != none ]]; then failures=$((failures + 1)); note="FAIL $note"; fi
      if awk -v r="$rps" -v p="$previous_rps" 'BEGIN { exit !(p > 0 && r < p * 1.10) }'; then
        flat=$((flat + 1)); note="saturated $note"
      else
        flat=0
      fi
      read -r -a b <<< "$before"; read -r -a a <<< "$after"
      printf '%-8s %5s %10s %9s %9s %9s %7s %-14s %6s %6s %6s %6s %s\n' "$route" "$c" "$rps" "$p50" "$p99" "$p999" "$non2xx" "$errors" \
        "$(cpu_percent "${b[0]}" "${a[0]}")" "$(cpu_percent "${b[1]}" "${a[1]}")" "$(cpu_percent "${b[2]}" "${a[2]}")" \
        "$(cpu_percent "${b[3]}" "${a[3]}")" "$note"
      previous_rps="$rps"
      ((flat < 2)) || break
    done
  done
}
# cpu_percent BEFORE AFTER: % of one CPU over the step.
cpu_percent() { awk -v b="$1" -v a="$2" -v t="$clock_ticks" -v s="$seconds" 'BEGIN { printf "%.0f", (a - b) / t / s * 100 }'; }

run_soak() {
  local duration=$((minutes * 60)) warmup=60 interval=10
  sed -n "1,$((minutes * 60 * 40 + 500))p" "$work/bodies.jsonl" > "$work/soak-bodies.jsonl"
  GATEWAY_BENCH_BODIES="$work/soak-bodies.jsonl" GATEWAY_BENCH_TOKENS="$work/tokens" GATEWAY_BENCH_THREADS=1 \
    LOAD_ROUTE_LUA="$root/bench/gateway/verify.lua" LOAD_DELAY_MS=100 \
    wrk_run soak-verify "$duration" 4 "$base/api/v1/payments/apple/transactions/verify" &
  local verify_wrk=$!
  GATEWAY_BENCH_TOKENS="$work/tokens" LOAD_ROUTE_LUA="$root/bench/gateway/balance.lua" LOAD_DELAY_MS=20 \
    wrk_run soak-balance "$duration" 4 "$base/api/v1/points/balance" &
  local balance_wrk=$!
  local names=(gateway payments points) pids=("$gateway_pid" "$payments_pid" "$points_pid")
  if [[ "$mutation" == leak ]]; then
    python3 -c '
import time
hold, files = [], []
for _ in range(300):
    hold.append(b"\x01" * (2 * 1024 * 1024)); files.append(open("/dev/null")); time.sleep(1)
time.sleep(3600)' > /dev/null 2>&1 &
    leaker_pid=$!
    names+=(leaker); pids+=("$leaker_pid")
  fi
  printf '%6s' "t s"; for n in "${names[@]}"; do printf ' %12s %6s' "$n MiB" "fds"; done; printf ' %13s %6s\n' "pg anon MiB" "procs"
  : > "$work/series"
  local start=$SECONDS t i
  while ((SECONDS - start <= duration + 5)); do
    t=$((SECONDS - start))
    local line="$t"
    printf '%6d' "$t"
    for i in "${!pids[@]}"; do
      local rss fds; rss="$(bench_rss_kib "${pids[$i]}")"; fds="$(bench_fd_count "${pids[$i]}")"
      printf ' %12.1f %6d' "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" "$fds"
      line+=" $rss $fds"
    done
    # PostgreSQL for information only: private memory (RssAnon; RSS would count
    # shared buffers again in every backend that touched them) and processes
    # (pool connections, autovacuum workers come and go).
    local pg_anon=0 pg_procs=0 p
    for p in $(bench_postgres_pids); do pg_anon=$((pg_anon + $(bench_rss_anon_kib "$p"))); pg_procs=$((pg_procs + 1)); done
    printf ' %13.1f %6d\n' "$(awk -v k="$pg_anon" 'BEGIN { print k / 1024 }')" "$pg_procs"
    echo "$line" >> "$work/series"
    kill -0 "$verify_wrk" 2>/dev/null || kill -0 "$balance_wrk" 2>/dev/null || break
    sleep "$interval"
  done
  # This runs in the report pipeline's subshell: end the leaker here, the EXIT trap cannot see its pid.
  if [[ -n "$leaker_pid" ]]; then kill "$leaker_pid" 2>/dev/null || true; wait "$leaker_pid" 2>/dev/null || true; fi
  wait "$verify_wrk" || failures=$((failures + 1))
  wait "$balance_wrk" || failures=$((failures + 1))
  local rps p50 p99 p999 non2xx errors route
  for route in verify balance; do
    read -r rps p50 p99 p999 non2xx errors <<< "$(wrk_fields "soak-$route")"
    echo "soak $route: $rps requests/s, p50 $p50 ms, p99 $p99 ms, p99.9 $p999 ms, non-2xx $non2xx, socket errors $errors"
    [[ "$non2xx" == 0 && "$errors" == none ]] || failures=$((failures + 1))
  done
  local outcomes; outcomes="$(grep '^verify_outcomes' "$work/soak-verify.wrk" || echo 'verify_outcomes missing')"
  echo "soak verify answers: ${outcomes#verify_outcomes }"
  grep -q 'already_granted=0 other=0 reused_bodies=0' <<< "$outcomes" || failures=$((failures + 1))
  # Growth: highest of the last three samples vs highest of the first three after warm-up.
  for i in "${!names[@]}"; do
    awk -v warmup="$warmup" -v col=$((2 + 2 * i)) -v name="${names[$i]}" '
      $1 >= warmup { n++; rss[n] = $col; fds[n] = $(col + 1) }
      END {
        if (n < 6) { printf "growth %-9s too few samples after the warm-up (%d)\n", name, n; exit 1 }
        for (k = 1; k <= 3; k++) { if (rss[k] > r0) r0 = rss[k]; if (fds[k] > f0) f0 = fds[k] }
        for (k = n - 2; k <= n; k++) { if (rss[k] > r1) r1 = rss[k]; if (fds[k] > f1) f1 = fds[k] }
        bound = r0 + 16384 + r0 / 10
        verdict = (r1 <= bound && f1 <= f0 + 8) ? "ok" : "GROWTH"
        printf "growth %-9s RSS %.1f -> %.1f MiB (bound %.1f), fds %d -> %d (bound %d): %s\n", name, r0 / 1024, r1 / 1024, bound / 1024, f0, f1, f0 + 8, verdict
        exit verdict == "ok" ? 0 : 1
      }' "$work/series" || failures=$((failures + 1))
  done
}

{
  echo "bench/load/run.sh $mode: $(date -u +%FT%TZ); $machine"
  echo "one Gateway, PaymentsService, PointsService (release, mTLS between them), PostgreSQL fsync=on; wrk -t1 on CPU $load_cpu, the rest unpinned"
  if [[ "$mode" == load ]]; then
    echo "${seconds}s per step; CPU in % of one CPU over the step (postgres: all its processes)"
    run_load
    ledger="$(bench_sql load_points "select count(*) from points_ledger where change_type = 'purchase'")"
    granted="$(cat "$work"/verify-*.wrk | sed -n 's/^verify_outcomes granted=\([0-9]*\).*/\1/p' | awk '{ total += $1 } END { print total + 0 }')"
    echo "verify answers granted: $granted (+1 check call); purchase ledger rows in PointsService: $ledger" \
         "(the difference: requests in flight when a wrk step stopped, which wrk does not count)"
  else
    echo "soak ${minutes} min: verify 4 connections x 100 ms pause, balance 4 connections x 20 ms pause; samples every 10 s"
    run_soak
  fi
  ((failures == 0)) && echo "RESULT: passed" || echo "RESULT: FAILED ($failures failures)"
} | tee "$report"
grep -q '^RESULT: passed' "$report" || exit 1
