#!/usr/bin/env bash
# libFuzzer + AddressSanitizer over the JWS parser and verifier
# (Fuzz/JWSFuzz/JWSFuzzTarget.swift, compiled with the AppStoreVerification
# sources into one module). Bounded: FUZZ_SECONDS (default 60) of fuzzing.
# Not part of CI. Crashes and the grown corpus stay in .build-fuzz/.
#
#   scripts/fuzz-jws.sh                 # 60 s
#   FUZZ_SECONDS=600 scripts/fuzz-jws.sh
#   scripts/fuzz-jws.sh -runs=100000    # extra arguments go to libFuzzer
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

seconds="${FUZZ_SECONDS:-60}"
out=".build-fuzz"
binary="$out/jws-fuzz"
corpus="$out/corpus"
fixtures="Tests/AppStoreVerificationTests/Fixtures"
swiftc="${SWIFTC:-/opt/swift/usr/bin/swiftc}"
mkdir -p "$out/crashes" "$corpus"

echo "== build $binary (-sanitize=fuzzer,address)"
mapfile -t sources < <(find Sources/AppStoreVerification Fuzz/JWSFuzz -name '*.swift' | sort)
# ld.gold warns about ASan's local symbols; the warnings are harmless.
"$swiftc" -sanitize=fuzzer,address -parse-as-library -swift-version 6 -O -g \
  -module-name AppStoreVerification -I Sources/COpenSSL \
  "${sources[@]}" -o "$binary" 2>&1 | grep -v "Cannot export local symbol" || true
[[ -x "$binary" ]] || { echo "fuzz build failed" >&2; exit 1; }

# Seeds: each real/mock JWS whole (mode 0), and the real transaction's
# header, payload and signature alone (modes 1-3), plus a raw-bytes seed.
python3 - "$fixtures" "$corpus" <<'PY'
import base64, os, sys
fixtures, corpus = sys.argv[1], sys.argv[2]
def b64url(part): return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
def seed(name, data):
    with open(os.path.join(corpus, name), "wb") as f: f.write(data)
for name in ("tx_sandbox_consumable.jws", "notification_test_sandbox.jws", "transactionInfo", "renewalInfo"):
    path = os.path.join(fixtures, name)
    if os.path.exists(path):
        seed("seed-jws-" + name, b"\x00" + open(path, "rb").read().strip())
header, payload, signature = open(os.path.join(fixtures, "tx_sandbox_consumable.jws")).read().strip().split(".")
seed("seed-header", b"\x01" + b64url(header))
seed("seed-payload", b"\x02" + b64url(payload))
seed("seed-signature", b"\x03" + b64url(signature))
seed("seed-bytes", b"\x04" + b64url(signature) + b"eyJhIjpbMSwyLHsiYiI6bnVsbH1dfQ")
PY

echo "== fuzz for ${seconds}s"
JWS_FUZZ_JWS="$fixtures/tx_sandbox_consumable.jws" JWS_FUZZ_ROOT="config/AppleRootCA-G3.cer" \
ASAN_OPTIONS="detect_leaks=0" \
  "$binary" -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$out/crashes/" "$@" "$corpus"
