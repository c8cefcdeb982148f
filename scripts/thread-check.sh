#!/usr/bin/env bash
# ThreadSanitizer over the test suite (see docs/MEMORY.md, "tsan").
#
#   scripts/thread-check.sh [FILTER]   (default: the runtime's and services' own tests,
#                                        'RPCCoreTests|RPCRuntimeTests|ServiceKitTests|HTTPServerTests|MetricsTests')
#
# Builds everything with --sanitize=thread and -DTSAN_VISIBLE_LOCKS into
# .build-tsan (the normal .build is untouched): with that flag the `Mutex`
# of the Locking module is a pthread lock TSan can see, where the standard
# library's is invisible to it and every access it guards reads as a race.
# Runs the tests matching FILTER (an XCTest --filter; suites that need
# PostgreSQL get the private cluster, scripts/pg.sh) with each report written
# to a log, and prints how many reports there were and the frames they
# start in. Exits 1 on any report or failed test. Reports whose accesses are
# both in test code that still uses the standard library's Mutex are
# counted apart (they are that lock, not the product).
# Bounded: the build (several minutes the first time on 2 cores) and the run
# each have a timeout.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
filter="${1:-RPCCoreTests|RPCRuntimeTests|ServiceKitTests|HTTPServerTests|MetricsTests}"
scratch="$root/.build-tsan"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "building with ThreadSanitizer into $scratch" >&2
timeout 3600 swift build --package-path "$root" --build-tests --sanitize=thread -Xswiftc -DTSAN_VISIBLE_LOCKS \
  --scratch-path "$scratch" > "$work/build.log" 2>&1 || { tail -30 "$work/build.log" >&2; exit 1; }

# Into a variable first: the assignment fails (set -e, pipefail) when pg.sh
# does, where `eval "$(...)"` would go on without a cluster.
pg_env="$("$root/scripts/pg.sh" start | sed 's/^/export /')"
eval "$pg_env"
echo "running the tests matching '$filter' under ThreadSanitizer" >&2
status=0
TSAN_OPTIONS="halt_on_error=0 history_size=4 log_path=$work/tsan" \
  timeout 1800 swift test --package-path "$root" --skip-build --sanitize=thread -Xswiftc -DTSAN_VISIBLE_LOCKS \
  --scratch-path "$scratch" --filter "$filter" > "$work/test.log" 2>&1 || status=$?
grep -E "Executed [0-9]+ tests" "$work/test.log" | tail -1 >&2 || true
if ((status != 0)); then
  echo "the tests failed (exit $status):" >&2
  grep -E "error:|failed" "$work/test.log" | head -20 >&2 || true
fi

shopt -s nullglob
logs=("$work"/tsan.*)
python3 - "${logs[@]}" <<'PY'
import re, sys
reports = []
for path in sys.argv[1:]:
    reports += open(path, errors="replace").read().split("WARNING: ThreadSanitizer: ")[1:]
def first_frame(section):
    match = re.search(r"#0 \S+ (\S+)", section)
    return match.group(1).split("/work/")[-1] if match else "?"
kinds, test_only = {}, 0
for report in reports:
    sections = report.split("\n\n")
    frames = [first_frame(s) for s in sections[:2]]
    if all("/Tests/" in f or f.startswith("Tests/") for f in frames):
        test_only += 1
    key = (report.split("\n", 1)[0].split(" (")[0], " / ".join(frames))
    kinds[key] = kinds.get(key, 0) + 1
print(f"ThreadSanitizer: {len(reports)} reports ({test_only} with both accesses in test code)")
for (kind, frames), count in sorted(kinds.items(), key=lambda item: -item[1]):
    print(f"  {count:4d}  {kind}: {frames}")
PY
if ((${#logs[@]} > 0)); then
  mkdir -p "$root/.build-tsan/reports"
  cp "${logs[@]}" "$root/.build-tsan/reports/"
  echo "full reports: $root/.build-tsan/reports/" >&2
  exit 1
fi
exit "$status"
