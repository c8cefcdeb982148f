#!/usr/bin/env bash
# A/B of the whole purchase path: alternates bench/gateway/run.sh between the
# services of REV ("before", built in a temporary worktree) and those of this
# working tree ("after"), on the same PostgreSQL cluster, with this tree's
# load generators and bench script for both, then prints one line per run
# and the median of each side.
#
# On a shared two-core machine the load of other work moves absolute rates
# from run to run; alternating the two sides, and reading the CPU per
# purchase more than the rates, is what makes a change of a few per cent
# visible at all (docs/PERFORMANCE.md, "Session 7").
#
# Usage: bench/gateway/ab.sh REV [rounds=2] [seconds-per-phase=10] [connections=16] [verify-transactions=16000]
# (GATEWAY_BENCH_PHASES=balance in the environment: the balance phase only, about a minute a run.)
# Bounded: rounds x 2 runs of bench/gateway/run.sh (each under 3 minutes
# after the build), plus one release build of REV's three services.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
(($# >= 1)) || { echo "usage: bench/gateway/ab.sh REV [rounds=2] [seconds=10] [connections=16] [verify-transactions=16000]" >&2; exit 2; }
rev="$1"
rounds="${2:-2}"
seconds="${3:-10}"
connections="${4:-16}"
transactions="${5:-16000}"
[[ "$rounds" =~ ^[0-9]+$ ]] && ((rounds >= 1 && rounds <= 5)) || { echo "rounds must be 1...5" >&2; exit 2; }
commit="$(git -C "$root" rev-parse --verify --quiet "$rev^{commit}")" || { echo "not a commit: $rev" >&2; exit 2; }

tree="$(mktemp -d "${TMPDIR:-/tmp}/gateway-ab.XXXXXX")"
cleanup() {
  git -C "$root" worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
  git -C "$root" worktree prune 2>/dev/null || true
}
trap cleanup EXIT
git -C "$root" worktree add --detach --quiet "$tree" "$commit"
echo "building the services of ${commit:0:12} (release) in $tree" >&2
for product in Gateway PaymentsService PointsService; do
  timeout 1800 "$tree/scripts/build-release.sh" --product "$product" --package-path "$tree" > "$tree/build.log" 2>&1 \
    || { echo "building $product of ${commit:0:12} failed:" >&2; tail -30 "$tree/build.log" >&2; exit 1; }
done
before_bin="$tree/.build/release"

out="$root/bench/out"
mkdir -p "$out"
report="$out/gateway-ab-$(date -u +%Y%m%dT%H%M%SZ).txt"
lines=()
# summary SIDE LOG: "side verify/s p99 cpu gateway payments points postgres reused load step1 step3
# balance/s ratio gateway-ms call-us stalls" (step1/step3: purchases per statement of the saga's steps 1 and 3,
# "-" when the services do not batch them; then four of the balance phase: its rate, its ratio to
# `pgbench -S`, the gateway's CPU per balance request and a GetBalances call's mean as the gateway saw it;
# last, the disk's stalls during the verify phase, over 20 ms / over 50 ms: a p99 over 50 ms beside
# stalls is the disk's).
# With GATEWAY_BENCH_PHASES=balance (passed on to run.sh) the verify columns are 0.
summary() {
  local side="$1" log="$2"
  awk -v side="$side" -v load="$(cut -d' ' -f1 /proc/loadavg)" '
    $1 == "verify" && $2 ~ /^[0-9.]+$/ { rate = $2; p99 = $4 }
    /^verify answers:/ { for (i = 1; i <= NF; i++) if ($i ~ /^reused_bodies=/) { split($i, kv, "="); reused = kv[2] + 0 } }
    /^per purchase \(verify phase/ {
      for (i = 1; i <= NF; i++) {
        if ($i == "gateway") gw = $(i + 1); if ($i == "payments") pay = $(i + 1)
        if ($i == "points") pts = $(i + 1); if ($i == "postgres") pg = $(i + 1); if ($i == "total") total = $(i + 1)
      }
    }
    /^group commit in the verify phase: step 1/ { step1 = $10; step3 = $20 }
    $1 == "balance" && $2 ~ /^[0-9.]+$/ { brate = $2 }
    /^balance \/ pgbench -S = / { bratio = $6 }
    /^per balance request:/ { for (i = 1; i <= NF; i++) if ($i == "gateway") bgw = $(i + 1) }
    /^coalesced balance reads:/ { for (i = 1; i <= NF; i++) if ($i == "took") call = $(i + 1) }
    /the disk during the verify phase: disk / { for (i = 1; i <= NF; i++) { if ($i == "stalls") s20 = $(i - 1); if ($i == "over" && $(i + 1) == "50") s50 = $(i - 1) } }
    END { printf "%-6s %9.0f %9s %7s %7s %7s %7s %7s %6s %5s %5s %5s %9.0f %5s %7s %7s %7s\n", side, rate, (p99 == "" ? "-" : p99), (total == "" ? 0 : total),
                 (gw == "" ? 0 : gw), (pay == "" ? 0 : pay), (pts == "" ? 0 : pts), (pg == "" ? 0 : pg), reused + 0, load,
                 (step1 == "" ? "-" : step1), (step3 == "" ? "-" : step3), brate, (bratio == "" ? "-" : bratio),
                 (bgw == "" ? "-" : bgw), (call == "" ? "-" : call), (s20 == "" ? "-" : s20 "/" s50) }
  ' "$log"
}
header="$(printf '%-6s %9s %9s %7s %7s %7s %7s %7s %6s %5s %5s %5s %9s %5s %7s %7s %7s' side verify/s p99 cpu_ms gateway payment points pg_ms reused load step1 step3 balance/s ratio bgw_ms call_us stalls)"
echo "A/B before=${commit:0:12} after=working tree ($(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo '+changes')), $rounds rounds, run.sh $seconds $connections $transactions" | tee "$report"
for round in $(seq 1 "$rounds"); do
  for side in before after; do
    log="$(mktemp)"
    if [[ "$side" == before ]]; then
      GATEWAY_BENCH_SERVICES_BIN="$before_bin" "$root/bench/gateway/run.sh" "$seconds" "$connections" "$transactions" > "$log" 2>&1 \
        || { echo "run.sh failed ($side, round $round):" >&2; tail -20 "$log" >&2; rm -f "$log"; exit 1; }
    else
      "$root/bench/gateway/run.sh" "$seconds" "$connections" "$transactions" > "$log" 2>&1 \
        || { echo "run.sh failed ($side, round $round):" >&2; tail -20 "$log" >&2; rm -f "$log"; exit 1; }
    fi
    lines+=("$(summary "$side" "$log")")
    rm -f "$log"
    echo "${lines[-1]}" >&2
  done
done
{
  echo "$header"
  printf '%s\n' "${lines[@]}"
  echo "medians (verify/s, CPU ms per purchase; balance / pgbench -S, gateway CPU ms per balance request):"
  for side in before after; do
    printf '%s\n' "${lines[@]}" | awk -v side="$side" 'BEGIN { n = 0 }
      $1 == side { rate[n] = $2; cpu[n] = $4; ratio[n] = $14 + 0; bgw[n] = $15 + 0; n++ }
      function median(a, n,   i, j, t) { for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                        return n % 2 ? a[int(n / 2)] : (a[n / 2 - 1] + a[n / 2]) / 2 }
      END { printf "  %-6s %9.0f/s %7.3f ms   %5.2f %7.3f ms\n", side, median(rate, n), median(cpu, n), median(ratio, n), median(bgw, n) }'
  done
} | tee -a "$report"
echo "report: $report" >&2
