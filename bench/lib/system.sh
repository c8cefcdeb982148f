# Shell pieces the system-level benchmarks share (bench/fault/run.sh,
# bench/load/run.sh): build, the private PostgreSQL cluster, per-run
# databases, starting a release service and waiting for its "listening on"
# line, stopping only what was started (by PID), users with tokens, and
# /proc readings. Source it after setting `root` (the repository) and
# `work` (a private temporary folder); it defines functions and the arrays
# `bench_pids` and `psql_admin`. Every wait is bounded.

bench_pids=()
bin="$root/.build/release"

# bench_build PRODUCT...: release builds of only these products.
bench_build() {
  local product
  for product in "$@"; do
    echo "building $product (release)" >&2
    timeout 1800 "$root/scripts/build-release.sh" --product "$product" --package-path "$root" >/dev/null \
      || { echo "build of $product failed" >&2; return 1; }
  done
}

# bench_pg_start: starts (or finds) the private cluster; sets PG_PORT and psql_admin.
bench_pg_start() {
  eval "$(timeout 120 "$root/scripts/pg.sh" start)"
  psql_admin=(env PGOPTIONS=-cclient_min_messages=warning psql -h 127.0.0.1 -p "$PG_PORT" -U iap -v ON_ERROR_STOP=1 -qAt -d postgres)
}

# bench_recreate_databases NAME...: drop and create, for a clean run.
bench_recreate_databases() {
  local db
  for db in "$@"; do
    timeout 60 "${psql_admin[@]}" -c "drop database if exists $db" -c "create database $db"
  done
}

# bench_sql DB SQL: one query on DB, unaligned output.
bench_sql() { timeout 60 "${psql_admin[@]}" -d "$1" -c "$2"; }

# bench_free_port: a port free on 127.0.0.1 right now, below the kernel's
# ephemeral range, so no outgoing connection takes it while its process is
# down between a kill and a restart.
bench_free_port() {
  python3 - <<'PY'
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(200):
    port = random.randrange(max(1024, low - 12000), low)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        print(port)
        break
    except OSError:
        pass
    finally:
        s.close()
else:
    raise SystemExit("no free port below the ephemeral range")
PY
}

# bench_start LOG EXECUTABLE [ENV...]: starts $bin/EXECUTABLE with ENV, stdout and
# stderr appended to $work/LOG.{out,err}; waits (<= 30 s) for its "listening on"
# line after the previous ones; sets `started_pid` and `started_address`. The
# admin listener gets a free port (ADMIN_LISTEN_ADDR=127.0.0.1:0 unless ENV sets
# it): several instances, and other checkouts' runs, never fight over 918x.
bench_start() {
  local log="$1" name="$2"; shift 2
  touch "$work/$log.out" "$work/$log.err"
  local seen; seen="$(grep -v ' admin listening on ' "$work/$log.out" | grep -c 'listening on' || true)"
  env ADMIN_LISTEN_ADDR=127.0.0.1:0 "$@" "$bin/$name" >> "$work/$log.out" 2>> "$work/$log.err" &
  started_pid=$!
  bench_pids+=("$started_pid")
  started_address=""
  for _ in $(seq 1 600); do
    started_address="$(sed -n '/ admin listening on /!s/^.*listening on //p' "$work/$log.out" | sed -n "$((${seen:-0} + 1))p" || true)"
    [[ -n "$started_address" ]] && return 0
    kill -0 "$started_pid" 2>/dev/null || break
    sleep 0.05
  done
  echo "$name ($log) did not start:" >&2; tail -n 20 "$work/$log.err" >&2; return 1
}

# bench_stop_all: SIGTERM then (after <= 5 s) SIGKILL, only the processes started here.
bench_stop_all() {
  local pid
  for pid in "${bench_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${bench_pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  bench_pids=()
}

# bench_random_secret: 48 random bytes, base64 (never printed by the scripts).
bench_random_secret() { head -c 48 /dev/urandom | base64 | tr -d '\n'; }

# bench_mint_users COUNT FILE GATEWAY_ENV...: COUNT fresh users, "uuid<TAB>token" lines.
bench_mint_users() {
  local count="$1" file="$2"; shift 2
  local i user token
  : > "$file"
  for i in $(seq 1 "$count"); do
    user="$(cat /proc/sys/kernel/random/uuid)"
    token="$(timeout 10 env "$@" "$bin/Gateway" mint-token --sub "$user" --email "bench$i@example.com" --ttl 7200)" \
      || { echo "Gateway mint-token failed" >&2; return 1; }
    printf '%s\t%s\n' "$user" "$token" >> "$file"
  done
}

# bench_cpu_ticks PID...: utime + stime of these processes, in clock ticks.
bench_cpu_ticks() {
  local pid total=0 fields
  for pid in "$@"; do
    # Fields after the ")" of comm: state is 1st, utime 12th, stime 13th.
    fields="$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null)" || continue
    read -r -a parts <<< "$fields"
    total=$((total + parts[11] + parts[12]))
  done
  echo "$total"
}

# bench_rss_kib PID: resident set size in KiB (0 when gone).
bench_rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# bench_rss_anon_kib PID: private resident memory (RssAnon) in KiB (0 when gone).
bench_rss_anon_kib() { awk '/^RssAnon:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# bench_fd_count PID: open file descriptors (0 when gone).
bench_fd_count() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }

# bench_postgres_pids: the cluster's postmaster and its children.
bench_postgres_pids() {
  local postmaster
  postmaster="$(head -1 "${IAP_DATA_DIR:-$root/.data}/pg/postmaster.pid" 2>/dev/null)" || return 0
  echo "$postmaster"
  pgrep -P "$postmaster" 2>/dev/null || true
}
