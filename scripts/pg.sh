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
#   scripts/pg.sh env     print what start prints (PG_PORT, PGPASSFILE, the URLs, ...)
#   scripts/pg.sh status  exit 0 when running
#   scripts/pg.sh destroy stop and delete the cluster
# PostgreSQL refuses to run as root, so as root the cluster is owned by the
# system user "iapdev" (created on first use).
# Every connection, TCP or socket, needs the superuser's password
# (scram-sha-256), so no other local user is superuser "iap": it is made
# once into .data/pg.pass (libpq's password file, mode 0600), which the
# printed PGPASSFILE names and the printed URLs carry. A cluster made when
# this script trusted every local connection gets it on its next start.
# Print format: NAME=value lines, for eval "$(scripts/pg.sh start | sed
# 's/^/export /')"; PGPASSFILE's line exports itself too, so a caller that
# evals without the sed (bench/) hands it to its psql and pgbench.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
data_root="${IAP_DATA_DIR:-$root/.data}"
pgdata="$data_root/pg"
sockdir="$data_root/pg-socket"
portfile="$data_root/pg.port"
logfile="$data_root/pg.log"
passfile="$data_root/pg.pass"
export PGPASSFILE="$passfile"

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
    open_path_to_owner
  else
    mkdir -p "$data_root"
  fi
}

# The owner must be able to reach the data folder through its parents. Only
# the parents it cannot search yet are opened, outermost first: to iapdev
# alone where ACLs can be set (setfacl), else search permission for others.
open_path_to_owner() {
  local parents=() d="$data_root"
  while [[ "$d" != "/" ]]; do d="$(dirname "$d")"; parents=("$d" "${parents[@]}"); done
  for d in "${parents[@]}"; do
    runuser -u iapdev -- test -x "$d" && continue
    if command -v setfacl >/dev/null && setfacl -m u:iapdev:x "$d" 2>/dev/null; then continue; fi
    chmod o+x "$d"
    echo "pg.sh: gave others search permission (o+x) on $d: the cluster's owner iapdev must reach $data_root" >&2
  done
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

# The superuser's password: the last field of the password file's first line.
password() { sed -n '1s/.*://p' "$passfile"; }

# Makes the password once (hex: nothing libpq or a URL would need escaped).
ensure_password() {
  [[ -s "$passfile" ]] && return 0
  if [[ -f "$pgdata/PG_VERSION" ]] && ! trusts_local_connections; then
    echo "pg.sh: $passfile is missing and the cluster in $pgdata asks for it: scripts/pg.sh destroy, then start" >&2
    exit 1
  fi
  write_passfile "$(openssl rand -hex 24)" 0
}

# Writes the password file for password $1 and port $2: mode 0600, replaced whole.
write_passfile() {
  ( umask 077
    printf '127.0.0.1:%s:*:iap:%s\n%s:%s:*:iap:%s\n' "$2" "$1" "${sockdir//:/\\:}" "$2" "$1" > "$passfile.new" )
  mv -f "$passfile.new" "$passfile"
}

# True for a cluster made when this script ran initdb --auth=trust.
trusts_local_connections() {
  grep -Eq '^[[:space:]]*(local|host)[^#]*[[:space:]]trust([[:space:]]|$)' "$pgdata/pg_hba.conf"
}

# A trusting cluster (running) gets the password, then asks for it on every connection.
require_password() {
  # Through stdin: a password on a command line is visible to every local user.
  printf "alter role iap password '%s';\n" "$(password)" \
    | psql -h 127.0.0.1 -p "$(port)" -U iap -d postgres -qX -v ON_ERROR_STOP=1 -f - >/dev/null
  as_owner sed -i -E 's/^([[:space:]]*(local|host)[^#]*[[:space:]])trust([[:space:]]|$)/\1scram-sha-256\3/' "$pgdata/pg_hba.conf"
  as_owner "$bindir/pg_ctl" -D "$pgdata" reload >/dev/null
  echo "pg.sh: the cluster trusted every local connection; it now asks for the password in $passfile" >&2
}

print_env() {
  local p pw
  p="$(port)"
  pw="$(password)"
  echo "PG_PORT=$p"
  echo "PG_SOCKET_DIR=$sockdir"
  echo "PGPASSFILE=$passfile; export PGPASSFILE"
  echo "POINTS_DATABASE_URL=postgresql://iap:$pw@127.0.0.1:$p/points"
  echo "PAYMENTS_DATABASE_URL=postgresql://iap:$pw@127.0.0.1:$p/payments"
}

is_running() { [[ -f "$pgdata/PG_VERSION" ]] && as_owner "$bindir/pg_ctl" -D "$pgdata" status >/dev/null 2>&1; }

start() {
  ensure_owner
  ensure_password
  if [[ ! -f "$pgdata/PG_VERSION" ]]; then
    as_owner mkdir -p "$pgdata" "$sockdir"
    # initdb reads the password from a file its user (iapdev, as root) can read; removed at once.
    local pwfile="$data_root/pg.initdb-password" status=0
    ( umask 077; password > "$pwfile" )
    [[ $(id -u) -ne 0 ]] || chown iapdev "$pwfile"
    as_owner "$bindir/initdb" -D "$pgdata" -U iap --pwfile="$pwfile" --auth-host=scram-sha-256 --auth-local=scram-sha-256 \
      -E UTF8 --locale=C.UTF-8 >/dev/null || status=$?
    rm -f "$pwfile"
    ((status == 0)) || { echo "pg.sh: initdb failed (exit $status)" >&2; exit 1; }
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
  write_passfile "$(password)" "$(port)"
  if trusts_local_connections; then require_password; fi
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
  destroy) stop; rm -rf "$pgdata" "$sockdir" "$portfile" "$logfile" "$passfile" ;;
  *) sed -n '2,23p' "$0"; exit 2 ;;
esac
