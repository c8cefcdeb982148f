#!/usr/bin/env bash
# Gateway benchmark over the whole system (release Gateway, PaymentsService,
# PointsService on the private PostgreSQL cluster), with wrk --latency:
#   balance  GET /api/v1/points/balance (one bearer token): Gateway -> Points -> one SELECT
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
# Prints requests/s, p50 and p99 for both. wrk is pinned to CPU 1; the three
# services and PostgreSQL are not pinned. Bench rows go to their own
# databases (gateway_bench_points, gateway_bench_payments), recreated per run.
# Bounded: each phase is a fixed number of seconds, every step has a timeout;
# < 3 minutes after the build.
#
# Usage: bench/gateway/run.sh [seconds-per-phase=10] [connections=16] [verify-transactions=20000]
# Results also go to bench/out/gateway-<timestamp>.txt (ignored by git).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
seconds="${1:-10}"
connections="${2:-16}"
transactions="${3:-20000}"
[[ "$seconds" =~ ^[0-9]+$ ]] && ((seconds >= 1 && seconds <= 60)) || { echo "seconds-per-phase must be 1...60" >&2; exit 2; }
[[ "$connections" =~ ^[0-9]+$ ]] && ((connections >= 1 && connections <= 256)) || { echo "connections must be 1...256" >&2; exit 2; }
[[ "$transactions" =~ ^[0-9]+$ ]] && ((transactions >= 1 && transactions <= 200000)) || { echo "verify-transactions must be 1...200000" >&2; exit 2; }
tokens=32
load_cpu=1
bundle_id="com.meeyao.qianwen"

if ! command -v wrk >/dev/null; then
  echo "installing wrk" >&2
  sudo_cmd=""; [[ $(id -u) -eq 0 ]] || sudo_cmd="sudo"
  timeout 240 $sudo_cmd apt-get install -y --no-install-recommends wrk >&2
fi
for tool in wrk curl psql taskset; do
  command -v "$tool" >/dev/null || { echo "missing tool: $tool" >&2; exit 2; }
done
[[ $(getconf _NPROCESSORS_ONLN) -ge 2 ]] || { echo "needs 2 CPUs (wrk pinned to CPU 1)" >&2; exit 2; }

echo "building Gateway, PaymentsService, PointsService, GatewayBench (release)" >&2
for product in Gateway PaymentsService PointsService GatewayBench SagaBench; do
  timeout 900 swift build -c release --product "$product" --package-path "$root" >/dev/null
done
bin="$root/.build/release"

eval "$(timeout 120 "$root/scripts/pg.sh" start)"
psql_admin=(env PGOPTIONS=-cclient_min_messages=warning psql -h 127.0.0.1 -p "$PG_PORT" -U iap -v ON_ERROR_STOP=1 -qAt -d postgres)
for db in gateway_bench_points gateway_bench_payments; do
  timeout 60 "${psql_admin[@]}" -c "drop database if exists $db" -c "create database $db"
done

work="$(mktemp -d)"
pids=()
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

# start NAME ENV... -- : runs $bin/NAME with --listen 127.0.0.1:0 (Gateway: LISTEN_ADDR), sets $address.
start() {
  local name="$1"; shift
  env ADMIN_LISTEN_ADDR=127.0.0.1:0 "$@" "$bin/$name" > "$work/$name.out" 2> "$work/$name.err" &
  pids+=($!)
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
start PointsService DATABASE_URL="postgresql://iap@127.0.0.1:$PG_PORT/gateway_bench_points" LOG_LEVEL=warning \
  PACKAGES_FILE="$root/config/packages.json" LISTEN_ADDR=127.0.0.1:0 INTERNAL_AUTH=off
points_address="$address"
start PaymentsService DATABASE_URL="postgresql://iap@127.0.0.1:$PG_PORT/gateway_bench_payments" LOG_LEVEL=warning \
  POINTS_ADDR="$points_address" LISTEN_ADDR=127.0.0.1:0 APPLE_BUNDLE_ID="$bundle_id" APPLE_ENVIRONMENTS=Sandbox \
  APPLE_ROOT_CERTS="$work/root.der,$work/saga/root.der" APPLE_ONLINE_CHECKS=0 INTERNAL_AUTH=off
payments_address="$address"
jwt_secret="$(head -c 48 /dev/urandom | base64 | tr -d '\n')"
email_secret="$(head -c 48 /dev/urandom | base64 | tr -d '\n')"
gateway_env=(JWT_HS256_SECRET="$jwt_secret" JWT_ISSUER=iap-bench JWT_AUDIENCE=iap-bench-app EMAIL_HASH_SECRET="$email_secret" POINTS_ADDR="$points_address"
             PAYMENTS_ADDR="$payments_address" LOG_LEVEL=warning INTERNAL_AUTH=off)
start Gateway "${gateway_env[@]}" LISTEN_ADDR=127.0.0.1:0
gateway_address="$address"
base="http://$gateway_address"

: > "$work/tokens"
for i in $(seq 1 "$tokens"); do
  user="$(cat /proc/sys/kernel/random/uuid)"
  timeout 10 env "${gateway_env[@]}" "$bin/Gateway" mint-token --sub "$user" --email "bench$i@example.com" --ttl 3600 >> "$work/tokens" \
    || { echo "Gateway mint-token failed" >&2; exit 1; }
done
first_token="$(head -1 "$work/tokens")"

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

echo "balance: ${seconds}s, $connections connections (no warm-up: the verify check call above warmed the path)" >&2
wrk_run balance -H "Authorization: Bearer $first_token" "$base/api/v1/points/balance"
echo "verify: ${seconds}s, $connections connections, $((transactions - 1)) fresh transactions" >&2
GATEWAY_BENCH_BODIES="$work/load-bodies.jsonl" GATEWAY_BENCH_TOKENS="$work/tokens" GATEWAY_BENCH_THREADS=1 \
  wrk_run verify -s "$root/bench/gateway/verify.lua" "$base/api/v1/payments/apple/transactions/verify"
echo "saga: ${seconds}s, $connections concurrent VerifyTransaction calls straight to PaymentsService" >&2
saga_line="$(timeout $((seconds + 60)) taskset -c "$load_cpu" "$bin/SagaBench" --target "$payments_address" --bodies "$work/saga/bodies.jsonl" \
  --concurrency "$connections" --seconds "$seconds")" || { echo "SagaBench failed" >&2; cat "$work"/*.err >&2; exit 1; }
outcomes="$(grep '^verify_outcomes' "$work/verify.wrk" || true)"
first_other="$(grep '^verify_first_other' "$work/verify.wrk" || true)"
credited="$(timeout 30 "${psql_admin[@]}" -d gateway_bench_points -c "select count(*) from points_ledger where change_type = 'purchase'" 2>/dev/null || echo '?')"
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
  read -r rps p50 p99 non2xx errors <<< "$(summary verify)"
  printf '%-8s %12s %10s %10s %8s %s\n' verify "$rps" "$p50" "$p99" "$non2xx" "$errors"
  echo "verify answers: ${outcomes#verify_outcomes }; purchase ledger rows in PointsService: $credited"
  echo "saga (VerifyTransaction over gRPC, no gateway, new user each): $saga_line"
  [[ -n "$first_other" ]] && echo "first unexpected verify answer: ${first_other#verify_first_other }"
  true
} | tee "$report"
