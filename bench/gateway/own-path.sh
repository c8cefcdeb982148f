#!/usr/bin/env bash
# The gateway's own HTTP path, A/B: GET /healthz (routing, admission, the
# access log's decision, metrics, the response and its Date header; no
# backend call) through one Gateway process, alternating the Gateway
# binaries of two directories, and the Gateway's CPU per request from
# /proc. A change of a few per cent to the per-request work is lost in the
# whole-system bench's noise on a shared machine; here both sides run
# minutes apart at most and only the gateway works.
#
# Usage: bench/gateway/own-path.sh DIR_A DIR_B [rounds=8] [seconds=5]
#   DIR_A, DIR_B hold a release Gateway each (e.g. copies of .build/release
#   from two revisions). wrk -t1 -c16 is pinned to CPU 1; the gateway is
#   started on 127.0.0.1:0 with placeholder backends (not called by
#   /healthz) and stopped by its PID after each run.
# Prints each run and the median and minimum microseconds of CPU per
# request of each side. Bounded: rounds x 2 runs of (2 + seconds) s.
set -euo pipefail
(($# >= 2)) || { echo "usage: bench/gateway/own-path.sh DIR_A DIR_B [rounds=8] [seconds=5]" >&2; exit 2; }
rounds="${3:-8}"
seconds="${4:-5}"
[[ "$rounds" =~ ^[0-9]+$ ]] && ((rounds >= 1 && rounds <= 20)) || { echo "rounds must be 1...20" >&2; exit 2; }
[[ "$seconds" =~ ^[0-9]+$ ]] && ((seconds >= 1 && seconds <= 30)) || { echo "seconds must be 1...30" >&2; exit 2; }
for dir in "$1" "$2"; do [[ -x "$dir/Gateway" ]] || { echo "no Gateway in $dir" >&2; exit 2; }; done
command -v wrk >/dev/null || { echo "needs wrk (bench/gateway/run.sh installs it)" >&2; exit 2; }
work="$(mktemp -d)"
gateway_pid=""
cleanup() { [[ -z "$gateway_pid" ]] || kill "$gateway_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# measure DIR: "requests/s us-per-request" for one run.
measure() {
  rm -f "$work/out" "$work/err"
  env JWT_HS256_SECRET="$(head -c 48 /dev/urandom | base64 | tr -d '\n')" JWT_ISSUER=iap-bench JWT_AUDIENCE=iap-bench-app \
    EMAIL_HASH_SECRET="$(head -c 48 /dev/urandom | base64 | tr -d '\n')" POINTS_ADDR=127.0.0.1:9 PAYMENTS_ADDR=127.0.0.1:9 \
    LOG_LEVEL=warning INTERNAL_AUTH=off LISTEN_ADDR=127.0.0.1:0 ADMIN_LISTEN_ADDR=127.0.0.1:0 \
    "$1/Gateway" > "$work/out" 2> "$work/err" &
  gateway_pid=$!
  local address=""
  for _ in $(seq 1 200); do
    address="$(sed -n '/ admin listening on /!s/^.*listening on //p' "$work/out" 2>/dev/null | head -1)"
    [[ -n "$address" ]] && break
    sleep 0.05
  done
  [[ -n "$address" ]] || { echo "Gateway did not start:" >&2; cat "$work/err" >&2; exit 1; }
  timeout 60 taskset -c 1 wrk -t1 -c16 -d2s "http://$address/healthz" > /dev/null
  local before after requests
  before="$(awk '{print $14 + $15}' "/proc/$gateway_pid/stat")"
  requests="$(timeout 90 taskset -c 1 wrk -t1 -c16 -d"${seconds}s" "http://$address/healthz" | awk '/ requests in / {print $1}')"
  after="$(awk '{print $14 + $15}' "/proc/$gateway_pid/stat")"
  kill "$gateway_pid"; wait "$gateway_pid" 2>/dev/null || true; gateway_pid=""
  awk -v r="$requests" -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" -v s="$seconds" \
    'BEGIN { printf "%d %.2f\n", r / s, t * 1e6 / hz / r }'
}

for round in $(seq 1 "$rounds"); do
  for side in A B; do
    dir="$1"; [[ "$side" == A ]] || dir="$2"
    read -r rate cost <<< "$(measure "$dir")"
    echo "$side $rate $cost" >> "$work/runs"
    printf 'round %d %s: %8d requests/s, %6.2f us CPU per request\n' "$round" "$side" "$rate" "$cost"
  done
done
for side in A B; do
  awk -v side="$side" '$1 == side { print $3 }' "$work/runs" | sort -n | awk -v side="$side" '
    { v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                         printf "%s: median %.2f us, minimum %.2f us CPU per request over %d runs\n", side, m, v[1], NR }'
done
