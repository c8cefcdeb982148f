#!/usr/bin/env bash
# libFuzzer + AddressSanitizer over the StoreKit 1 receipt reader
# (Fuzz/AppReceiptFuzz/AppReceiptFuzzTarget.swift, compiled with the
# AppReceipt sources into one module). Bounded: FUZZ_SECONDS (default 60)
# of fuzzing. Not part of CI. Crashes and the grown corpus stay in
# .build-fuzz-receipts/.
#
#   scripts/fuzz-receipts.sh                 # 60 s
#   FUZZ_SECONDS=600 scripts/fuzz-receipts.sh
#   scripts/fuzz-receipts.sh -runs=100000    # extra arguments go to libFuzzer
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

seconds="${FUZZ_SECONDS:-60}"
out=".build-fuzz-receipts"
binary="$out/receipt-fuzz"
corpus="$out/corpus"
swiftc="${SWIFTC:-/opt/swift/usr/bin/swiftc}"
mkdir -p "$out/crashes" "$corpus"

echo "== build $binary (-sanitize=fuzzer,address)"
mapfile -t sources < <(find Sources/AppReceipt Fuzz/AppReceiptFuzz -name '*.swift' | sort)
# ld.gold warns about ASan's local symbols; the warnings are harmless.
"$swiftc" -sanitize=fuzzer,address -parse-as-library -swift-version 6 -O -g \
  -module-name AppReceipt "${sources[@]}" -o "$binary" 2>&1 | grep -v "Cannot export local symbol" || true
[[ -x "$binary" ]] || { echo "fuzz build failed" >&2; exit 1; }

# Seeds: a payload with two in-app purchases (mode 1), signed by openssl
# with a throwaway key as DER and as streamed BER (mode 0), and its base64
# (mode 2).
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$work/payload.der" <<'PY'
import sys
def tlv(tag, content):
    n = len(content)
    length = bytes([n]) if n < 0x80 else bytes([0x80 | ((n.bit_length() + 7) // 8)]) + n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag]) + length + content
def integer(v): return tlv(0x02, v.to_bytes(max(1, (v.bit_length() + 8) // 8), "big", signed=True))
def attribute(t, value): return tlv(0x30, integer(t) + integer(1) + tlv(0x04, value))
def utf8(s): return tlv(0x0C, s.encode())
def ia5(s): return tlv(0x16, s.encode())
def purchase(tid):
    return tlv(0x31, attribute(1701, integer(1)) + attribute(1702, utf8("com.example.credits.100"))
               + attribute(1703, utf8(tid)) + attribute(1704, ia5("2023-10-19T01:18:54Z"))
               + attribute(1705, utf8(tid)) + attribute(1712, ia5("")))
payload = tlv(0x31, attribute(2, utf8("com.example.receipts")) + attribute(3, utf8("1.0"))
              + attribute(17, purchase("2000000000000001")) + attribute(17, purchase("2000000000000002")))
open(sys.argv[1], "wb").write(payload)
PY
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/key.pem" \
  -out "$work/cert.pem" -subj /CN=fuzz -days 1 2>/dev/null
for mode in der stream; do
  extra=(); [[ $mode == stream ]] && extra=(-stream)
  openssl cms -sign -md sha256 -nodetach -binary -outform DER "${extra[@]}" -in "$work/payload.der" \
    -signer "$work/cert.pem" -inkey "$work/key.pem" -out "$work/receipt-$mode.p7"
  { printf '\x00'; cat "$work/receipt-$mode.p7"; } > "$corpus/seed-receipt-$mode"
  { printf '\x02'; base64 -w0 "$work/receipt-$mode.p7"; } > "$corpus/seed-base64-$mode"
done
{ printf '\x01'; cat "$work/payload.der"; } > "$corpus/seed-payload"

echo "== fuzz for ${seconds}s"
ASAN_OPTIONS="detect_leaks=0" \
  "$binary" -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$out/crashes/" "$@" "$corpus"
