#!/usr/bin/env bash
# The whole test suite: installs what is missing, checks the generated code,
# starts the private PostgreSQL cluster, builds, and runs the Swift tests and
# the stock-gRPC interop tests. CI runs exactly this (.ci/run).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

scripts/install-deps.sh
scripts/generate-protos.sh --check
eval "$(scripts/pg.sh start | sed 's/^/export /')"

swift build --build-tests 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' || { echo "build failed" >&2; exit 1; }
swift test --skip-build 2>&1 | tee .data/swift-test.log | grep -vE "^Test Case .* (started|passed)" 
swift_status=${PIPESTATUS[0]}

py_status=0
if compgen -G "Tests/interop/test_*.py" >/dev/null; then
  .venv/bin/python -m pytest -q Tests/interop || py_status=$?
fi

if [[ $swift_status -ne 0 || $py_status -ne 0 ]]; then
  echo "tests failed (swift: $swift_status, interop: $py_status)" >&2
  exit 1
fi
