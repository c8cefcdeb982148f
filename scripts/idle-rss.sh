#!/usr/bin/env bash
# Measures each service's idle memory the way docs/PERFORMANCE.md reports it
# (issue #13): starts the system with `scripts/run.sh --detach --no-demo`
# (release build, mutual TLS, every listener on 127.0.0.1 port 0, its own
# temporary RUN_STATE_DIR), waits 10 s after the gateway is ready, reads
# /proc/PID/status (VmRSS, Threads) and /proc/PID/smaps_rollup (Rss, Pss,
# Anonymous, Private_Dirty) of the three services, stops exactly the
# processes that run started (`scripts/run.sh stop`, by PID), and repeats.
# Prints every start, then the median per service. Values are KiB.
#
#   scripts/idle-rss.sh            3 starts
#   scripts/idle-rss.sh 5          5 starts (1..9)
# Environment: IDLE_SECONDS (default 10) is the wait after readiness; the
# rest (BUILD_CONFIGURATION, MALLOC_ARENA_MAX, ...) reaches run.sh and the
# services unchanged.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

starts="${1:-3}"
[[ "$starts" =~ ^[1-9]$ ]] || { echo "the number of starts must be 1..9" >&2; exit 2; }
idle_seconds="${IDLE_SECONDS:-10}"
[[ "$idle_seconds" =~ ^[0-9]{1,3}$ ]] || { echo "IDLE_SECONDS must be 0..999" >&2; exit 2; }
services=(points payments gateway)
fields=(VmRSS Rss Pss Anonymous Private_Dirty Threads)

work="$(mktemp -d /tmp/idle-rss.XXXXXX)"
state=""
stop_run() {
  if [[ -n "$state" ]]; then
    RUN_STATE_DIR="$state" scripts/run.sh stop > /dev/null || true
    state=""
  fi
}
trap 'stop_run; rm -rf "$work"' EXIT

# One service's readings as "FIELD=KIB ..." in the order of `fields`.
read_memory() {
  local pid="$1" line="" field value
  for field in "${fields[@]}"; do
    case "$field" in
      VmRSS|Threads) value="$(awk -v f="$field:" '$1 == f { print $2 }' "/proc/$pid/status")" ;;
      *) value="$(awk -v f="$field:" '$1 == f { print $2 }' "/proc/$pid/smaps_rollup")" ;;
    esac
    line+="$field=${value:-?} "
  done
  echo "${line% }"
}

for ((start = 1; start <= starts; start++)); do
  state="$work/run-$start"
  mkdir -p "$state"
  # Listen ports 0: run.sh then puts the admin listeners on port 0 too.
  if ! RUN_STATE_DIR="$state" POINTS_LISTEN=127.0.0.1:0 PAYMENTS_LISTEN=127.0.0.1:0 GATEWAY_LISTEN=127.0.0.1:0 \
      scripts/run.sh --detach --no-demo > "$work/run-$start.log" 2>&1; then
    cat "$work/run-$start.log" >&2
    exit 1
  fi
  sleep "$idle_seconds"
  for name in "${services[@]}"; do
    echo "start=$start service=$name $(read_memory "$(head -1 "$state/pids/$name.pid")")" | tee -a "$work/readings"
  done
  stop_run
done

echo "median of $starts starts (KiB; Threads is a count):"
for name in "${services[@]}"; do
  line="$name"
  for field in "${fields[@]}"; do
    median="$(grep " service=$name " "$work/readings" | tr ' ' '\n' | sed -n "s/^$field=//p" | sort -n \
      | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
    line+=" $field=$median"
  done
  echo "$line"
done
