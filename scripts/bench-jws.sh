#!/usr/bin/env bash
# JWS verification benchmark, all in one run on the same machine:
#   (a) our SignedDataVerifier (bench/jws, release build) on the real
#       Apple-signed transaction: cached chain and cold (new verifier each time);
#   (b) Apple's official Python library (app-store-server-library,
#       SignedDataVerifier, online checks off, Sandbox, com.goodheartapp) on
#       the same JWS;
#   (c) `openssl speed ecdsap256`, one raw P-256 verify, as the ceiling.
# Each measurement is pinned to one core with `taskset -c $BENCH_CPU` (default
# 1) and bounded in time; the whole script takes well under 2 minutes once
# built. Prints verifications/s and the ratios; not part of CI.
#
#   scripts/bench-jws.sh            # BENCH_SECONDS=3 per Swift mode, PYTHON_SECONDS=10
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

cpu="${BENCH_CPU:-1}"
seconds="${BENCH_SECONDS:-3}"
python_seconds="${PYTHON_SECONDS:-10}"
python_iterations_max="${PYTHON_ITERATIONS_MAX:-5000}"
jws="Tests/AppStoreVerificationTests/Fixtures/tx_sandbox_consumable.jws"
root_cert="config/AppleRootCA-G3.cer"
bundle_id="com.goodheartapp"
pin=(taskset -c "$cpu")

# Apple's library, pinned in scripts/requirements.txt, inside the project venv.
if [[ ! -x .venv/bin/python ]]; then scripts/install-deps.sh; fi
if ! .venv/bin/python -c "import appstoreserverlibrary" 2>/dev/null; then
  .venv/bin/pip install -q --disable-pip-version-check "$(grep -E '^app-store-server-library==' scripts/requirements.txt)"
fi

echo "== build (release)"
scripts/build-release.sh --product JWSBench 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' || true
bench="$(scripts/build-release.sh --show-bin-path)/JWSBench"
[[ -x "$bench" ]] || { echo "JWSBench did not build" >&2; exit 1; }

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), pinned to cpu $cpu"
echo "== $(openssl version), $(.venv/bin/python --version), app-store-server-library $(.venv/bin/pip show app-store-server-library 2>/dev/null | awk '/^Version/ {print $2}')"

echo "== (a) Swift SignedDataVerifier"
swift_out="$("${pin[@]}" "$bench" --jws "$jws" --root "$root_cert" --bundle-id "$bundle_id" \
  --mode both --iterations 2000000 --seconds "$seconds")"
echo "$swift_out"
field() { sed -n "s/.*mode=$1 .*$2=\([0-9.]*\).*/\1/p" <<<"$swift_out"; }
cached_per_second="$(field cached verifications_per_second)"
cold_per_second="$(field cold verifications_per_second)"

echo "== (b) Apple app-store-server-library (Python)"
python_out="$("${pin[@]}" .venv/bin/python - "$jws" "$root_cert" "$bundle_id" "$python_seconds" "$python_iterations_max" <<'PY'
import sys, time
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier

jws_path, root_path, bundle_id, seconds, iterations_max = sys.argv[1:6]
jws = open(jws_path).read().strip()
verifier = SignedDataVerifier([open(root_path, "rb").read()], False, Environment.SANDBOX, bundle_id)
decoded = verifier.verify_and_decode_signed_transaction(jws)
assert decoded.transactionId == "2000000847061981", decoded.transactionId
deadline = time.perf_counter() + float(seconds)
count, start = 0, time.perf_counter()
while count < int(iterations_max):
    verifier.verify_and_decode_signed_transaction(jws)
    count += 1
    if time.perf_counter() >= deadline:
        break
elapsed = time.perf_counter() - start
print(f"mode=python iterations={count} seconds={elapsed:.3f} "
      f"microseconds_per_verification={elapsed / count * 1e6:.2f} verifications_per_second={count / elapsed:.0f}")
PY
)"
echo "$python_out"
python_per_second="$(sed -n 's/.*verifications_per_second=\([0-9.]*\).*/\1/p' <<<"$python_out")"

echo "== (c) openssl speed -seconds 3 ecdsap256"
openssl_out="$("${pin[@]}" openssl speed -seconds 3 ecdsap256 2>/dev/null | grep 'nistp256')"
echo "$openssl_out"
raw_per_second="$(awk '{print $NF}' <<<"$openssl_out")"

echo "== summary"
awk -v cached="$cached_per_second" -v cold="$cold_per_second" -v py="$python_per_second" -v raw="$raw_per_second" 'BEGIN {
  printf "swift_cached_verifications_per_second=%.0f\n", cached
  printf "swift_cold_verifications_per_second=%.0f\n", cold
  printf "python_verifications_per_second=%.0f\n", py
  printf "openssl_p256_verifications_per_second=%.0f\n", raw
  printf "ratio_cached_over_python=%.1f (goal >= 20)\n", cached / py
  printf "ratio_cold_over_python=%.1f\n", cold / py
  printf "cached_cost_in_raw_p256_verifies=%.2f (goal <= 2)\n", raw / cached
  printf "cold_cost_in_raw_p256_verifies=%.2f\n", raw / cold
}'
