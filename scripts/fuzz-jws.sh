#!/usr/bin/env bash
# libFuzzer + AddressSanitizer over the JWS parser and verifier: the "jws"
# target of scripts/fuzz.sh (kept for existing habits and docs). Bounded:
# FUZZ_SECONDS (default 60). Crashes and the grown corpus stay in
# .build-fuzz/jws/.
#
#   scripts/fuzz-jws.sh                 # 60 s
#   FUZZ_SECONDS=600 scripts/fuzz-jws.sh
#   scripts/fuzz-jws.sh -runs=100000    # extra arguments go to libFuzzer
set -euo pipefail
exec "$(dirname "$0")/fuzz.sh" jws -- "$@"
