#!/usr/bin/env bash
# Formats the Swift sources with the toolchain's swift-format and the
# repository's .swift-format; `--check` changes nothing and fails, naming
# each file and line, when a file is not formatted (scripts/test.sh runs it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

command -v swift-format >/dev/null || { echo "swift-format is not on PATH (it ships with the Swift toolchain)" >&2; exit 2; }
paths=(Package.swift Sources Tests Fuzz bench)

case "${1:-}" in
  --check)
    report="$(mktemp)"
    trap 'rm -f "$report"' EXIT
    if ! swift-format lint --strict --parallel --recursive "${paths[@]}" 2> "$report"; then
      head -40 "$report" >&2
      echo "$(grep -c 'warning:\|error:' "$report") formatting findings: run scripts/format.sh" >&2
      exit 1
    fi
    ;;
  "")
    swift-format format --in-place --parallel --recursive "${paths[@]}"
    ;;
  *)
    echo "usage: scripts/format.sh [--check]" >&2; exit 2 ;;
esac
