#!/usr/bin/env bash
# A private PostgreSQL cluster for development, tests and CI: initdb into the
# git-ignored .data/pg, listening on 127.0.0.1 and a socket in .data/pg-socket
# on a free port. One database per service (points, payments).
#
#   scripts/pg.sh start   init if needed, start, create databases; prints env
#                         (on the saved port, or a new one when another
#                         process has taken it since)
#   scripts/pg.sh stop    fast shutdown
#   scripts/pg.sh restart stop then start on the same port (fails if taken)
#   scripts/pg.sh env     print PG_PORT, POINTS_DATABASE_URL, PAYMENTS_DATABASE_URL
#   scripts/pg.sh status  exit 0 when running
#   scripts/pg.sh destroy stop and delete the cluster
# PostgreSQL refuses to run as root, so as root the cluster is owned by the
# system user "iapdev" (created on first use).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
data_root="${IAP_DATA_DIR:-$root/.data}"
pgdata="$data_root/pg"
sockdir="$data_root/pg-socket"
portfile="$data_root/pg.port"
logfile="$data_root/pg.log"

bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
[[ -x "$bindir/pg_ctl" ]] || { echo "PostgreSQL server binaries not found: run scripts/install-deps.sh" >&2; exit 2; }

as_owner() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u iapdev -- "$@"; else "$@"; fi
}

ensure_owner() {
  if [[ $(id -u) -eq 0 ]]; then
    id iapdev >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin iapdev
    mkdir -p "$data_root"
    chown iapdev "$data_root"
    # The owner must be able to reach the data folder through its parents.
    local d="$data_root"
    while [[ "$d" != "/" ]]; do d="$(dirname "$d")"; chmod o+x "$d" 2>/dev/null || true; done
  else
    mkdir -p "$data_root"
  fi
}

free_port() {
  python3 - <<'PY'
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()
PY
}

# True when PostgreSQL could listen on 127.0.0.1:$1 (it binds with
# SO_REUSEADDR, so a port in TIME_WAIT counts as free, as for it).
port_free() {
  python3 - "$1" <<'PY'
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
finally:
    s.close()
PY
}

port() { cat "$portfile"; }

# Keeps the saved port unless another process holds it (the port was free
# when it was picked, not for good: after a reboot anything may have it);
# with $1 = same-port (restart: running clients hold URLs with the port)
# that is an error instead.
choose_port() {
  if [[ -f "$portfile" ]] && ! port_free "$(port)"; then
    if [[ "${1:-}" == same-port ]]; then
      echo "pg.sh: port $(port) is taken by another process: the cluster cannot start on it again" >&2
      exit 1
    fi
    local taken; taken="$(port)"
    free_port > "$portfile"
    echo "pg.sh: port $taken is taken by another process: the cluster moves to port $(port)" >&2
  fi
  [[ -f "$portfile" ]] || free_port > "$portfile"
}

print_env() {
  local p; p="$(port)"
  echo "PG_PORT=$p"
  echo "PG_SOCKET_DIR=$sockdir"
  echo "POINTS_DATABASE_URL=postgresql://iap@127.0.0.1:$p/points"
  echo "PAYMENTS_DATABASE_URL=postgresql://iap@127.0.0.1:$p/payments"
}

is_running() { [[ -f "$pgdata/PG_VERSION" ]] && as_owner "$bindir/pg_ctl" -D "$pgdata" status >/dev/null 2>&1; }

start() {
  ensure_owner
  if [[ ! -f "$pgdata/PG_VERSION" ]]; then
    as_owner mkdir -p "$pgdata" "$sockdir"
    as_owner "$bindir/initdb" -D "$pgdata" -U iap --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
    cat >> "$pgdata/postgresql.conf" <<CONF
# Set by scripts/pg.sh for a private development cluster.
listen_addresses = '127.0.0.1'
unix_socket_directories = '$sockdir'
max_connections = 300
shared_buffers = 256MB
fsync = on
synchronous_commit = on
log_min_messages = warning
CONF
  fi
  as_owner mkdir -p "$sockdir"
  if ! is_running; then
    choose_port "${1:-}"
    # wal_compression on the command line, so clusters made before it get it too
    # (docs/OPERATIONS.md, "PostgreSQL settings").
    as_owner "$bindir/pg_ctl" -D "$pgdata" -l "$logfile" -o "-p $(port) -c wal_compression=lz4" -w -t 60 start >/dev/null
  fi
  for db in points payments; do
    if ! psql -h 127.0.0.1 -p "$(port)" -U iap -d postgres -tAc "select 1 from pg_database where datname='$db'" | grep -q 1; then
      psql -h 127.0.0.1 -p "$(port)" -U iap -d postgres -qc "create database $db" >/dev/null
    fi
  done
  print_env
}

stop() {
  if is_running; then as_owner "$bindir/pg_ctl" -D "$pgdata" -m fast -w stop >/dev/null; fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  restart) stop; start same-port ;;
  env) print_env ;;
  status) is_running ;;
  destroy) stop; rm -rf "$pgdata" "$sockdir" "$portfile" "$logfile" ;;
  *) sed -n '2,15p' "$0"; exit 2 ;;
esac
