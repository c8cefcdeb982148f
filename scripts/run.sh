#!/usr/bin/env bash
# Runs the whole system on this machine: installs what is missing, starts the
# private PostgreSQL cluster, builds what it runs (release, through
# scripts/build-release.sh: the binaries the image ships), creates a local-testing
# signing CA once (.data/local-ca), an internal CA and one certificate per
# service once (.data/internal-pki: gateway, payments, points and a sample
# spend caller, spend-caller; see scripts/internal-pki.sh), starts
# PointsService (127.0.0.1:50052) and PaymentsService (127.0.0.1:50051) on
# mutual TLS and the Gateway (127.0.0.1:8080) in front of them, waits
# until the gateway's /readyz answers 200, runs the demo purchase, then keeps
# running until Ctrl-C (SIGINT/SIGTERM stop the three services gracefully).
#
#   scripts/run.sh                 everything above
#   scripts/run.sh --no-demo       skip the demo
#   scripts/run.sh --detach        start and return (stop with `scripts/run.sh stop`)
#   scripts/run.sh stop            stop the services a detached run started
#   scripts/run.sh demo            run the demo again against a running system
#
# Logs: .data/logs/{points,payments,gateway}.log (JSON lines, stderr) and
# .out (stdout). Secrets are generated once into .data/secrets.env.
# Environment knobs (for CI and tests): POINTS_LISTEN, PAYMENTS_LISTEN,
# GATEWAY_LISTEN (HOST:PORT, port 0 picks one; the gateway's chosen address
# is written to $RUN_STATE_DIR/gateway.addr), POINTS_ADMIN_LISTEN,
# PAYMENTS_ADMIN_LISTEN, GATEWAY_ADMIN_LISTEN (each service's admin
# listener, ADMIN_LISTEN_ADDR: by default 127.0.0.1 on its default port
# 9182, 9181, 9180, or on port 0 when the service's own listen port is 0, so
# a run on port 0 takes no fixed port; announced in logs/NAME.out),
# RUN_STATE_DIR (default .data; pids and logs go there), BUILD_CONFIGURATION
# (release or debug), APPLE_SANDBOX_USER_IDS (users whose Sandbox purchases
# are credited), RUN_INTERNAL_AUTH (mtls, the default, or off: cleartext
# between the services, which they allow on loopback only).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

state="${RUN_STATE_DIR:-$root/.data}"
logs="$state/logs"
pids="$state/pids"
configuration="${BUILD_CONFIGURATION:-release}"
points_listen="${POINTS_LISTEN:-127.0.0.1:50052}"
payments_listen="${PAYMENTS_LISTEN:-127.0.0.1:50051}"
gateway_listen="${GATEWAY_LISTEN:-127.0.0.1:8080}"
# The admin listener of a service listening on $1, whose default admin port is $2.
admin_listen() { if [[ "$1" == *:0 ]]; then echo 127.0.0.1:0; else echo "127.0.0.1:$2"; fi; }
points_admin_listen="${POINTS_ADMIN_LISTEN:-$(admin_listen "$points_listen" 9182)}"
payments_admin_listen="${PAYMENTS_ADMIN_LISTEN:-$(admin_listen "$payments_listen" 9181)}"
gateway_admin_listen="${GATEWAY_ADMIN_LISTEN:-$(admin_listen "$gateway_listen" 9180)}"
services=(gateway payments points) # stop order
internal_auth="${RUN_INTERNAL_AUTH:-mtls}"
[[ "$internal_auth" == mtls || "$internal_auth" == off ]] || { echo "RUN_INTERNAL_AUTH must be mtls or off" >&2; exit 2; }
ready_timeout_seconds=90
stop_timeout_seconds=20

demo=1 detach=0 command=start
for argument in "$@"; do
  case "$argument" in
    --no-demo) demo=0 ;;
    --detach) detach=1 ;;
    stop) command=stop ;;
    demo) command=demo ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    *) echo "unknown argument $argument (see --help)" >&2; exit 2 ;;
  esac
done

# The start time of process $1 (/proc/PID/stat field 22, clock ticks since
# boot): with the pid it names one process, never a later one given the pid.
start_time() {
  local stat fields
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  read -ra fields <<< "${stat##*) }" # after the name, which may hold spaces and parentheses
  echo "${fields[19]}"
}

# The executable process $1 runs ("... (deleted)" once a rebuild replaced it).
executable() {
  local path
  path="$(readlink "/proc/$1/exe" 2>/dev/null)" || return 1
  echo "${path% (deleted)}"
}

# write_pid_file NAME PID BINARY: the pid file names the process by its pid,
# start time and executable's path, one per line. (A pid file written by an
# older run.sh holds only the pid: alive() then checks the executable's name.)
write_pid_file() {
  printf '%s\n%s\n%s\n' "$2" "$(start_time "$2")" "$(readlink -f "$bin/$3")" > "$pids/$1.pid"
}
pid_of() { head -1 "$pids/$1.pid"; }

# True when pid file $1 names a live process we started with binary $2: the
# same pid, start time and executable, so a recycled pid is never signalled.
alive() {
  local file="$pids/$1.pid" pid="" start="" path="" running
  [[ -f "$file" ]] || return 1
  { read -r pid; read -r start; read -r path; } < "$file" || true
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  running="$(executable "$pid")" || return 1
  if [[ -z "$start" ]]; then
    [[ "${running##*/}" == "$2" ]]
    return
  fi
  [[ "$(start_time "$pid")" == "$start" && "$running" == "$path" ]]
}

binary_name() {
  case "$1" in gateway) echo Gateway ;; payments) echo PaymentsService ;; points) echo PointsService ;; esac
}

stop_services() {
  local name pid waited
  for name in "${services[@]}"; do
    if alive "$name" "$(binary_name "$name")"; then
      pid="$(pid_of "$name")"
      kill -TERM "$pid" 2>/dev/null || true
      waited=0
      while kill -0 "$pid" 2>/dev/null && ((waited < stop_timeout_seconds * 10)); do sleep 0.1; waited=$((waited + 1)); done
      if kill -0 "$pid" 2>/dev/null; then
        echo "$name did not stop within ${stop_timeout_seconds}s: SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
      fi
      echo "stopped $name (pid $pid)"
    fi
    rm -f "$pids/$name.pid"
  done
}

if [[ "$command" == stop ]]; then
  stop_services
  exit 0
fi

# What run.sh builds and runs; a release build goes through
# scripts/build-release.sh (static Swift runtime: what ships).
products=(PointsService PaymentsService Gateway Demo)
swift_build() {
  if [[ "$configuration" == release ]]; then scripts/build-release.sh "$@"; else swift build -c "$configuration" "$@"; fi
}
bin_dir() { swift_build --show-bin-path; }

load_secrets() {
  local file="$state/secrets.env"
  if [[ ! -f "$file" ]]; then
    mkdir -p "$state"
    ( umask 077
      { echo "JWT_HS256_SECRET=$(openssl rand -hex 32)"
        echo "EMAIL_HASH_SECRET=$(openssl rand -hex 32)"; } > "$file" )
  fi
  set -a
  # shellcheck disable=SC1090
  source "$file"
  set +a
  export JWT_ISSUER="${JWT_ISSUER:-https://auth.iap-credits.local}"
  export JWT_AUDIENCE="${JWT_AUDIENCE:-iap-credits-demo}"
  export APPLE_BUNDLE_ID="${APPLE_BUNDLE_ID:-com.meeyao.qianwen}"
  export APPLE_APP_APPLE_ID="${APPLE_APP_APPLE_ID:-1234567890}"
}

run_demo() {
  local address="$1"
  "$(bin_dir)/Demo" run --gateway "$address" --ca "$root/.data/local-ca"
}

if [[ "$command" == demo ]]; then
  load_secrets
  run_demo "$(cat "$state/gateway.addr" 2>/dev/null || echo "$gateway_listen")"
  exit 0
fi

scripts/install-deps.sh
# Into a variable first: the assignment fails (set -e, pipefail) when pg.sh
# does, where `eval "$(...)"` would go on without a cluster.
pg_env="$(scripts/pg.sh start | sed 's/^/export /')"
eval "$pg_env"

for name in "${services[@]}"; do
  if alive "$name" "$(binary_name "$name")"; then
    echo "$name is already running (pid $(pid_of "$name")): scripts/run.sh stop first" >&2
    exit 1
  fi
done

mkdir -p "$state"
echo "== build ($configuration)"
: > "$state/swift-build-$configuration.log"
for product in "${products[@]}"; do
  if ! swift_build --product "$product" >> "$state/swift-build-$configuration.log" 2>&1; then
    grep -E "error:" "$state/swift-build-$configuration.log" | head -40 >&2 || tail -40 "$state/swift-build-$configuration.log" >&2
    echo "build of $product failed" >&2
    exit 1
  fi
done
bin="$(bin_dir)"

"$bin/Demo" init-ca --out "$root/.data/local-ca"
load_secrets
mkdir -p "$logs" "$pids"

# Internal authentication: each service's certificate (served to callers and
# presented to the services it calls) and the internal CA every caller's
# certificate must chain to. Keys stay in $pki (mode 600), never printed.
pki="$state/internal-pki"
if [[ "$internal_auth" == mtls ]]; then
  scripts/internal-pki.sh "$pki" gateway payments points spend-caller
  points_auth=(TLS_CERT="$pki/points.pem" TLS_KEY="$pki/points.key" TLS_CLIENT_CA="$pki/ca.pem" POINTS_SPEND_CALLERS=spend-caller)
  payments_auth=(TLS_CERT="$pki/payments.pem" TLS_KEY="$pki/payments.key" TLS_CLIENT_CA="$pki/ca.pem" POINTS_TLS_CA="$pki/ca.pem")
  gateway_auth=(BACKEND_TLS_CA_FILE="$pki/ca.pem" BACKEND_TLS_CERT="$pki/gateway.pem" BACKEND_TLS_KEY="$pki/gateway.key")
else
  points_auth=(INTERNAL_AUTH=off) payments_auth=(INTERNAL_AUTH=off) gateway_auth=(INTERNAL_AUTH=off)
fi

# Starts service $1 (binary $2) with the environment in the remaining
# arguments, in its own session so Ctrl-C reaches only this script, and
# prints the address it announces ("... listening on HOST:PORT").
start_service() {
  local name="$1" binary="$2"
  shift 2
  : > "$logs/$name.out"
  # Exported in a subshell rather than passed through env(1): DATABASE_URL
  # carries the cluster's password, and a command line is visible to every user.
  ( export "$@"; exec setsid "$bin/$binary" >> "$logs/$name.out" 2>> "$logs/$name.log" < /dev/null ) &
  local pid=$! waited=0 address=""
  write_pid_file "$name" "$pid" "$binary"
  while ((waited < ready_timeout_seconds * 10)); do
    address="$(sed -n '/ admin listening on /!s/.*listening on \([^ ]*\)$/\1/p' "$logs/$name.out" | head -1)"
    [[ -n "$address" ]] && break
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "$binary exited during start-up; last log lines:" >&2
      tail -20 "$logs/$name.log" >&2
      return 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  [[ -n "$address" ]] || { echo "$binary did not announce its address within ${ready_timeout_seconds}s" >&2; return 1; }
  echo "$address"
}

on_signal() {
  trap - INT TERM
  echo
  echo "== stopping"
  stop_services
  exit 0
}
if ((!detach)); then trap on_signal INT TERM; fi
fail_start() {
  stop_services
  exit 1
}

echo "== start"
points_address="$(start_service points PointsService \
  LISTEN_ADDR="$points_listen" ADMIN_LISTEN_ADDR="$points_admin_listen" DATABASE_URL="$POINTS_DATABASE_URL" PACKAGES_FILE="$root/config/packages.json" "${points_auth[@]}")" || fail_start
echo "PointsService   $points_address   log $logs/points.log"
# Shaped like production with an App Review allow-list (Sandbox credited only
# to APPLE_SANDBOX_USER_IDS), plus Xcode in local-testing mode, which is
# credited for every user: the demo buys there as a fresh user.
payments_address="$(start_service payments PaymentsService \
  LISTEN_ADDR="$payments_listen" ADMIN_LISTEN_ADDR="$payments_admin_listen" DATABASE_URL="$PAYMENTS_DATABASE_URL" POINTS_ADDR="$points_address" \
  APPLE_ROOT_CERTS="$root/config/AppleRootCA-G3.cer,$root/.data/local-ca/root.pem" APPLE_LOCAL_TESTING=1 \
  APPLE_ENVIRONMENTS=Production,Sandbox,Xcode APPLE_SANDBOX_USER_IDS="${APPLE_SANDBOX_USER_IDS:-}" \
  APPLE_APP_APPLE_ID="$APPLE_APP_APPLE_ID" APPLE_BUNDLE_ID="$APPLE_BUNDLE_ID" "${payments_auth[@]}")" || fail_start
echo "PaymentsService $payments_address   log $logs/payments.log"
gateway_address="$(start_service gateway Gateway \
  LISTEN_ADDR="$gateway_listen" ADMIN_LISTEN_ADDR="$gateway_admin_listen" POINTS_ADDR="$points_address" PAYMENTS_ADDR="$payments_address" "${gateway_auth[@]}")" || fail_start
echo "Gateway         $gateway_address   log $logs/gateway.log"
echo "$gateway_address" > "$state/gateway.addr"

waited=0
until curl -fsS -o /dev/null "http://$gateway_address/readyz" 2>/dev/null; do
  if ((waited >= ready_timeout_seconds * 10)); then
    echo "the gateway did not become ready within ${ready_timeout_seconds}s" >&2
    fail_start
  fi
  sleep 0.1
  waited=$((waited + 1))
done
echo "== ready: http://$gateway_address (readyz 200)"

if ((demo)); then
  echo "== demo"
  if ! run_demo "$gateway_address"; then
    echo "the demo failed; logs in $logs" >&2
    if ((!detach)); then stop_services; fi
    exit 1
  fi
fi

if ((detach)); then
  echo "running detached; stop with: scripts/run.sh stop"
  exit 0
fi
echo "== running; Ctrl-C stops the services"
while true; do
  for name in "${services[@]}"; do
    if ! alive "$name" "$(binary_name "$name")"; then
      echo "$name exited; see $logs/$name.log" >&2
      stop_services
      exit 1
    fi
  done
  sleep 1 &
  wait $! || true
done
