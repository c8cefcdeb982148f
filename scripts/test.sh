#!/usr/bin/env bash
# The whole test suite: installs what is missing, checks the generated code,
# starts the private PostgreSQL cluster, builds, and runs the Swift tests and
# the stock-gRPC interop tests. CI runs exactly this (.ci/run).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

scripts/install-deps.sh
scripts/generate-protos.sh --check
scripts/format.sh --check
# Into a variable first: the assignment fails (set -e, pipefail) when pg.sh
# does, where `eval "$(...)"` would go on without a cluster.
pg_env="$(scripts/pg.sh start | sed 's/^/export /')"
eval "$pg_env"

# Everything the build and the tests write to the temporary directory (the
# services' logs, scratch keys and certificates, the compiler's scratch
# folders, pytest's tmp_path) goes to one folder of this run: removed when
# the suite passes, kept (and named) when it fails. The cluster's socket is
# in .data, not here.
run_tmp="$(mktemp -d /tmp/iap-tests.XXXXXX)"
export TMPDIR="$run_tmp"
keep_run_tmp() { echo "this run's temporary files: $run_tmp" >&2; }

if ! swift build --build-tests > .data/swift-build.log 2>&1; then
  grep -E "error:" .data/swift-build.log | head -40 >&2 || tail -40 .data/swift-build.log >&2
  keep_run_tmp
  echo "build failed" >&2
  exit 1
fi

# The pure targets beside the …IntegrationTests ones must need no database:
# run them once without the cluster's settings (a few seconds).
if ! env -u PG_PORT -u PGPASSFILE -u POINTS_DATABASE_URL -u PAYMENTS_DATABASE_URL -u DATABASE_URL \
    timeout 300 swift test --skip-build --filter '^(PostgresClientTests|PointsServiceTests|PaymentsServiceTests)\.' \
    > .data/swift-pure-test.log 2>&1; then
  grep -E "error:" .data/swift-pure-test.log | head -20 >&2
  echo "a pure test target needs PostgreSQL (see .data/swift-pure-test.log): move the test to its …IntegrationTests target" >&2
  keep_run_tmp
  exit 1
fi

# The whole suite must finish well inside CI's time; a hung test fails it.
# Then the `swift test` this script started is killed with everything it
# started (the XCTest process, the services the tests run), by pid: its
# descendants, found before the kill, and nothing of another run, in this
# checkout or another. Started in the background (so a timer can run
# beside it), it ignores SIGINT: Ctrl-C or SIGTERM here ends it the same way.
descendants() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null || true); do echo "$child"; descendants "$child"; done
}
kill_tree() { # SIGNAL PID
  local tree
  mapfile -t tree < <(descendants "$2")
  kill "-$1" "$2" "${tree[@]}" 2>/dev/null || true
}
swift_timeout_seconds="${SWIFT_TEST_TIMEOUT_SECONDS:-1200}"
swift_status=0
stdbuf -oL swift test --skip-build > .data/swift-test.log 2>&1 &
swift_pid=$!
sleep "$swift_timeout_seconds" > /dev/null 2>&1 < /dev/null &
timer_pid=$!
trap 'kill_tree TERM "$swift_pid"; kill "$timer_pid" 2>/dev/null || true; keep_run_tmp; exit 130' INT TERM
finished=""
wait -n -p finished "$swift_pid" "$timer_pid" || swift_status=$?
if [[ "$finished" == "$timer_pid" ]]; then
  echo "swift test did not finish within ${swift_timeout_seconds}s: killing it and what it started" >&2
  kill_tree KILL "$swift_pid"
  wait "$swift_pid" 2>/dev/null || true
  swift_status=137
else
  kill "$timer_pid" 2>/dev/null || true
  wait "$timer_pid" 2>/dev/null || true
fi
trap - INT TERM
grep -E "error:|Executed [0-9]+ tests?, with [1-9][0-9]* failures?" .data/swift-test.log | head -40 || true
summary=$(grep -E "^\s*Executed [0-9]+ tests?, with [0-9]+ failures?" .data/swift-test.log | tail -1 || true)
echo "swift: ${summary:-no summary (the test process died or hung: see .data/swift-test.log)}"
if [[ $swift_status -ne 0 || -z "$summary" || ! "$summary" =~ with\ 0\ failures ]]; then
  tail -20 .data/swift-test.log >&2
  swift_status=1
fi

py_status=0
.venv/bin/python -m pytest -q Tests/interop 2>&1 | tee .data/pytest.log || py_status=$?
py_count=$(grep -oE "^[0-9]+ passed" .data/pytest.log | tail -1 | grep -oE "[0-9]+" || echo 0)

if [[ $swift_status -ne 0 || $py_status -ne 0 ]]; then
  keep_run_tmp
  echo "tests failed (swift: $swift_status, interop: $py_status)" >&2
  exit 1
fi
rm -rf "$run_tmp"
swift_count=$(echo "$summary" | grep -oE "Executed [0-9]+" | grep -oE "[0-9]+")
echo "$((swift_count + py_count)) passed, 0 failed"
