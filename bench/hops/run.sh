#!/usr/bin/env bash
# What a process hop costs on this machine, measured with the leanest proxy
# there is: `pgbench -S -M prepared` (the balance goal's reference) straight
# into PostgreSQL, through one PgBouncer, and through two PgBouncers in a
# chain, alternating, on the private cluster. PgBouncer (C, libevent, one
# thread, session pooling here, so each client keeps its server connection
# and prepared statements pass through) only forwards the protocol's
# messages: its CPU per transaction is the floor of what a hop costs, the
# kernel's loopback sends and receives and the wake-ups included.
#
# Two hops is the shape of GET balance: wrk -> Gateway -> PointsService ->
# PostgreSQL (docs/PERFORMANCE.md, "What a hop costs here"). The ratios say
# how much of pgbench's rate a chain of hops keeps when the hops do nothing
# else; the CPU per transaction of each PgBouncer is beside our services'
# CPU per request from bench/gateway/run.sh.
#
# Usage: bench/hops/run.sh [rounds=2] [seconds=10] [clients=16]
# Bounded: rounds x 3 pgbench runs of `seconds` each, every step under a
# timeout; the two PgBouncers are started here and stopped by PID.
# Installs pgbouncer (Debian) on first use; the project's tests do not need it.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
# The project's Debian packages and PostgreSQL (quick when all are there).
"$root/scripts/install-deps.sh" >&2
rounds="${1:-2}"
seconds="${2:-10}"
clients="${3:-16}"
[[ "$rounds" =~ ^[0-9]+$ ]] && ((rounds >= 1 && rounds <= 10)) || { echo "rounds must be 1...10" >&2; exit 2; }
[[ "$seconds" =~ ^[0-9]+$ ]] && ((seconds >= 1 && seconds <= 60)) || { echo "seconds must be 1...60" >&2; exit 2; }
[[ "$clients" =~ ^[0-9]+$ ]] && ((clients >= 1 && clients <= 128)) || { echo "clients must be 1...128" >&2; exit 2; }
load_cpu=1

"$root/scripts/apt-install.sh" pgbouncer
for tool in pgbench psql taskset; do
  command -v "$tool" >/dev/null || { echo "missing tool: $tool" >&2; exit 2; }
done
[[ $(getconf _NPROCESSORS_ONLN) -ge 2 ]] || { echo "needs 2 CPUs (pgbench pinned to CPU $load_cpu)" >&2; exit 2; }

eval "$(timeout 120 "$root/scripts/pg.sh" start)"
db=hops_bench
psql_admin=(env PGOPTIONS=-cclient_min_messages=warning psql -h 127.0.0.1 -p "$PG_PORT" -U iap -v ON_ERROR_STOP=1 -qAt -d postgres)
timeout 60 "${psql_admin[@]}" -c "drop database if exists $db" -c "create database $db"
timeout 300 pgbench -h 127.0.0.1 -p "$PG_PORT" -U iap -i -s 1 -q "$db" >/dev/null 2>&1

# PgBouncer refuses to run as root: as root it runs as the cluster's owner.
work="$(mktemp -d /tmp/hops-bench.XXXXXX)"
as_owner=()
if [[ $(id -u) -eq 0 ]]; then
  as_owner=(runuser -u iapdev --)
  chown iapdev "$work"
fi
bouncer_pids=()
# stop_bouncers: SIGTERM (PgBouncer's immediate shutdown) to the PgBouncers
# started here, then wait until each has exited (or is only a zombie).
stop_bouncers() {
  local pid tries
  for pid in "${bouncer_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${bouncer_pids[@]}"; do
    tries=0
    while [[ -r "/proc/$pid/stat" ]] && [[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]] && ((++tries <= 100)); do
      sleep 0.05
    done
  done
  bouncer_pids=()
}
cleanup() {
  stop_bouncers
  rm -rf "$work"
}
trap cleanup EXIT

# free_port: a port nothing listens on now, from the kernel.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

printf '"iap" ""\n' > "$work/users.txt"
# start_bouncer NAME TARGET_PORT: prints the new PgBouncer's port; its PID
# is in $work/NAME.pid.
start_bouncer() {
  local name="$1" target="$2" port
  port="$(free_port)"
  cat > "$work/$name.ini" <<EOF
[databases]
$db = host=127.0.0.1 port=$target dbname=$db
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $work/users.txt
pool_mode = session
max_client_conn = $((clients * 2 + 10))
default_pool_size = $((clients * 2))
logfile = $work/$name.log
pidfile = $work/$name.pid
EOF
  [[ $(id -u) -ne 0 ]] || chown iapdev "$work/$name.ini" "$work/users.txt"
  timeout 30 "${as_owner[@]}" /usr/sbin/pgbouncer -d "$work/$name.ini" >&2
  local tries=0
  until [[ -s "$work/$name.pid" ]]; do
    ((++tries <= 100)) || { echo "pgbouncer $name did not start:" >&2; cat "$work/$name.log" >&2; exit 1; }
    sleep 0.05
  done
  echo "$port"
}
# (start_bouncer runs in a subshell: the PIDs are read from the files here.)
near_port="$(start_bouncer near "$PG_PORT")"
near_pid="$(cat "$work/near.pid")"; bouncer_pids+=("$near_pid")
far_port="$(start_bouncer far "$near_port")"
far_pid="$(cat "$work/far.pid")"; bouncer_pids+=("$far_pid")

ticks_per_second="$(getconf CLK_TCK)"
# cpu_ticks PID: user + system CPU of a process so far, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# run_pgbench PORT: tps of one select-only run, pinned like the benches' load.
run_pgbench() {
  timeout $((seconds + 60)) taskset -c "$load_cpu" pgbench -h 127.0.0.1 -p "$1" -U iap -n -S -M prepared \
    -c "$clients" -j 1 -T "$seconds" "$db" 2>&1 | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1
}
# us_per_tx TICKS TPS: a process's CPU per transaction, in microseconds.
us_per_tx() { awk -v t="$1" -v hz="$ticks_per_second" -v tps="$2" -v s="$seconds" \
  'BEGIN { printf "%.1f", (tps > 0 ? t / hz * 1e6 / (tps * s) : 0) }'; }

echo "What a hop costs: $(date -u +%FT%TZ), $(getconf _NPROCESSORS_ONLN) CPUs, pgbench -S -M prepared, $clients clients, ${seconds}s, pinned to CPU $load_cpu"
printf '%-6s %10s %10s %10s %8s %8s %14s %14s\n' round direct one_hop two_hops "1/0" "2/0" "hop_us(1)" "hops_us(2)"
ratios_one=(); ratios_two=()
for ((round = 1; round <= rounds; round++)); do
  direct="$(run_pgbench "$PG_PORT")"
  before="$(cpu_ticks "$near_pid")"
  one="$(run_pgbench "$near_port")"
  one_ticks=$(( $(cpu_ticks "$near_pid") - before ))
  before_near="$(cpu_ticks "$near_pid")"; before_far="$(cpu_ticks "$far_pid")"
  two="$(run_pgbench "$far_port")"
  near_ticks=$(( $(cpu_ticks "$near_pid") - before_near )); far_ticks=$(( $(cpu_ticks "$far_pid") - before_far ))
  [[ -n "$direct" && -n "$one" && -n "$two" ]] || { echo "a pgbench run failed" >&2; exit 1; }
  r1="$(awk -v a="$one" -v b="$direct" 'BEGIN { printf "%.2f", a / b }')"
  r2="$(awk -v a="$two" -v b="$direct" 'BEGIN { printf "%.2f", a / b }')"
  ratios_one+=("$r1"); ratios_two+=("$r2")
  printf '%-6s %10.0f %10.0f %10.0f %8s %8s %14s %14s\n' "$round" "$direct" "$one" "$two" "$r1" "$r2" \
    "$(us_per_tx "$one_ticks" "$one")" "$(us_per_tx "$near_ticks" "$two") + $(us_per_tx "$far_ticks" "$two")"
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
echo "medians: one hop keeps $(median "${ratios_one[@]}") of pgbench -S, two hops $(median "${ratios_two[@]}")"
echo "(hop_us: the PgBouncer's own CPU per transaction, user + system, from /proc; two hops: the one nearer PostgreSQL + the other)"
stop_bouncers
timeout 60 "${psql_admin[@]}" -c "drop database if exists $db"
