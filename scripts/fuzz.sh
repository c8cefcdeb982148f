#!/usr/bin/env bash
# libFuzzer + AddressSanitizer (leaks included) over every parser that reads
# untrusted bytes. Each target is one Swift file in Fuzz/<Name>/ compiled
# together with only the sources it exercises into one module (so internal
# types are reachable), with `-sanitize=fuzzer,address`; a module it imports
# is built the same way into a static library first. A target builds in
# seconds to a minute. Not part of CI.
#
#   scripts/fuzz.sh                       # every target, FUZZ_SECONDS (default 60) each
#   scripts/fuzz.sh http1 json            # some targets, in that order
#   FUZZ_SECONDS=600 scripts/fuzz.sh grpc
#   scripts/fuzz.sh jws -- -runs=100000   # arguments after -- go to libFuzzer
#   scripts/fuzz.sh --list
#
# Targets (the harness file's header says what each input byte means and
# which oracles it checks):
#   jws       Fuzz/JWSFuzz         JWS parser and verifier (AppStoreVerification)
#   http1     Fuzz/HTTP1Fuzz       gateway HTTP/1.1 request parser and connection state machine
#   grpc      Fuzz/GRPCFuzz        gRPC message deframer and ServerStreamStateMachine
#   json      Fuzz/JSONFuzz        StrictJSON parser and writer (round trip)
#   protobuf  Fuzz/ProtobufFuzz    Contracts decoding: protobuf-c through the bridge
#   receipt   Fuzz/AppReceiptFuzz  StoreKit 1 app receipts (Sources/AppReceipt):
#                                  skipped until that module and its harness exist
#
# Seeds are checked in under Fuzz/<Name>/seeds/ and only read. Everything
# else stays in .build-fuzz/<target>/ (git-ignored): the binary, the grown
# corpus (kept between runs), fuzz.log, and crashes/ with every reproducer.
# Runs one target at a time in one process (no -jobs/-workers), each bounded
# by -max_total_time and a hard timeout.
#
# Exit status: 0 when no target found anything; 1 when any target crashed,
# leaked, timed out or ran out of memory (its reproducer is in
# .build-fuzz/<target>/crashes/; replay it by passing the file to the
# target's binary, with the environment fuzz.log's first line shows);
# 2 on a usage or build error.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

all_targets=(jws http1 grpc json protobuf receipt)
seconds="${FUZZ_SECONDS:-60}"
[[ "$seconds" =~ ^[0-9]+$ ]] && ((seconds >= 1)) || { echo "FUZZ_SECONDS must be a positive integer" >&2; exit 2; }
out=".build-fuzz"
swiftc="${SWIFTC:-/opt/swift/usr/bin/swiftc}"
clang="${CLANG:-/opt/swift/usr/bin/clang}"
# One package name, as SwiftPM passes it, for the `package` declarations between modules.
swift_flags=(-sanitize=fuzzer,address -parse-as-library -swift-version 6 -O -g -package-name IAPCredits)

targets=()
libfuzzer_args=()
while (($#)); do
  case "$1" in
    --) shift; libfuzzer_args=("$@"); break ;;
    --list) printf '%s\n' "${all_targets[@]}"; exit 0 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *)
      [[ " ${all_targets[*]} " == *" $1 "* ]] || { echo "unknown target: $1 (one of: ${all_targets[*]})" >&2; exit 2; }
      targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=("${all_targets[@]}")
[[ -x "$swiftc" ]] || { echo "swiftc not found at $swiftc (set SWIFTC)" >&2; exit 2; }

# ld.gold warns about ASan's local symbols; the warnings are harmless.
quiet_link() { grep -v "Cannot export local symbol" || true; }

# Sorted Swift sources under the given folders, one a line.
swift_sources() { find "$@" -name '*.swift' | sort; }

# build_library MODULE WORK ARGUMENT...: WORK/libMODULE.a and
# WORK/modules/MODULE.swiftmodule, instrumented like the fuzzers, from the
# sources and -I flags in ARGUMENT... (relative paths are to the root).
build_library() {
  local module="$1" work="$2" argument arguments=()
  shift 2
  for argument in "$@"; do
    [[ "$argument" == -* || "$argument" == /* ]] && arguments+=("$argument") || arguments+=("$root/$argument")
  done
  mkdir -p "$work/modules" "$work/objects"
  rm -f "$work/lib$module.a"
  echo "   module $module"
  # In its own folder: the whole-module build leaves an object file behind.
  (cd "$work/objects" && "$swiftc" "${swift_flags[@]}" -wmo -module-name "$module" -emit-library -static \
    -emit-module -emit-module-path "$root/$work/modules/$module.swiftmodule" -I "$root/$work/modules" \
    "${arguments[@]}" -o "$root/$work/lib$module.a") 2>&1 | quiet_link
  [[ -f "$work/lib$module.a" ]] || { echo "build of $module failed" >&2; exit 2; }
}

# build_fuzzer BINARY MODULE ARGUMENT...: the libFuzzer binary (sources,
# libraries, -I flags in ARGUMENT...).
build_fuzzer() {
  local binary="$1" module="$2"; shift 2
  echo "   fuzzer $binary (module $module)"
  mkdir -p "$(dirname "$binary")"
  rm -f "$binary"
  "$swiftc" "${swift_flags[@]}" -module-name "$module" "$@" -o "$binary" 2>&1 | quiet_link
  [[ -x "$binary" ]] || { echo "build of $binary failed" >&2; exit 2; }
}

# Each prepare_<target> builds into .build-fuzz/<target>/ and sets: harness
# (the Fuzz/<Name> folder), binary, max_len (bytes) and run_env (NAME=value
# for the run). It returns 3 to skip the target.

prepare_jws() {
  local work="$out/jws" sources
  harness="Fuzz/JWSFuzz" binary="$work/jws-fuzz" max_len=16384
  build_library StrictJSON "$work" $(swift_sources Sources/StrictJSON)
  build_library CryptoPrimitives "$work" -I Sources/COpenSSL $(swift_sources Sources/CryptoPrimitives)
  mapfile -t sources < <(swift_sources Sources/AppStoreVerification Fuzz/Support "$harness")
  build_fuzzer "$binary" AppStoreVerification -I Sources/COpenSSL -I "$work/modules" "${sources[@]}" \
    "$work/libStrictJSON.a" "$work/libCryptoPrimitives.a"
  # The suppression is one false positive at exit, explained in the file.
  run_env=(JWS_FUZZ_JWS=Tests/AppStoreVerificationTests/Fixtures/tx_sandbox_consumable.jws
    JWS_FUZZ_ROOT=config/AppleRootCA-G3.cer ASAN_OPTIONS=detect_leaks=1
    LSAN_OPTIONS=suppressions=$harness/lsan-suppressions.txt)
}

prepare_http1() {
  local work="$out/http1" sources
  harness="Fuzz/HTTP1Fuzz" binary="$work/http1-fuzz" max_len=24576
  # The parser, the connection state machine and the limits: no I/O, no main.swift.
  mapfile -t sources < <(swift_sources Sources/HTTPServer/HTTP1 Sources/HTTPServer/HTTPServerLimits.swift \
    Sources/HTTPServer/HTTPBodyLimits.swift Fuzz/Support "$harness")
  build_fuzzer "$binary" HTTPServer "${sources[@]}"
  run_env=(ASAN_OPTIONS=detect_leaks=1)
}

prepare_grpc() {
  local work="$out/grpc" sources
  harness="Fuzz/GRPCFuzz" binary="$work/grpc-fuzz" max_len=8192
  # RPCCore imports no C module: status, metadata, framing, state machines.
  mapfile -t sources < <(swift_sources Sources/RPCCore Fuzz/Support "$harness")
  build_fuzzer "$binary" RPCCore "${sources[@]}"
  run_env=(ASAN_OPTIONS=detect_leaks=1)
}

prepare_json() {
  local work="$out/json" sources
  harness="Fuzz/JSONFuzz" binary="$work/json-fuzz" max_len=8192
  mapfile -t sources < <(swift_sources Sources/StrictJSON Fuzz/Support "$harness")
  build_fuzzer "$binary" StrictJSON "${sources[@]}"
  run_env=(ASAN_OPTIONS=detect_leaks=1)
}

prepare_protobuf() {
  local work="$out/protobuf" sources objects=() c object
  harness="Fuzz/ProtobufFuzz" binary="$work/protobuf-fuzz" max_len=4096
  # Contracts needs only RPCCore (no transport, no C besides protobuf-c).
  build_library RPCCore "$work" $(swift_sources Sources/RPCCore)
  # protoc-c's generated descriptors, instrumented too; libprotobuf-c itself
  # is Debian's shared library (not instrumented: ASan still sees its
  # malloc/free, so leaks, double frees and use-after-free are caught, but
  # not out-of-bounds reads inside it).
  mkdir -p "$work/c"
  while IFS= read -r c; do
    object="$work/c/$(echo "${c#Sources/CContracts/}" | tr '/' '_').o"
    "$clang" -fsanitize=fuzzer-no-link,address -O1 -g -I Sources/CContracts/include -c "$c" -o "$object" \
      || { echo "build of $c failed" >&2; exit 2; }
    objects+=("$object")
  done < <(find Sources/CContracts -name '*.c' | sort)
  mapfile -t sources < <(swift_sources Sources/Contracts Fuzz/Support "$harness")
  build_fuzzer "$binary" Contracts -I Sources/CContracts/include -I Sources/CProtobufC \
    -I "$work/modules" "${sources[@]}" "${objects[@]}" "$work/libRPCCore.a" -lprotobuf-c
  run_env=(ASAN_OPTIONS=detect_leaks=1)
}

# StoreKit 1 app receipts (PKCS#7 + ASN.1), module Sources/AppReceipt; the
# harness is Fuzz/AppReceiptFuzz/AppReceiptFuzzTarget.swift (its first byte
# picks the mode: 0 a receipt, 1 a bare payload, 2 base64), and the seeds in
# Fuzz/AppReceiptFuzz/seeds/ are receipts signed by openssl with a throwaway
# key, as DER and streamed BER (made as scripts/fuzz-receipts.sh makes them).
prepare_receipt() {
  local work="$out/receipt" sources
  harness="Fuzz/AppReceiptFuzz" binary="$work/receipt-fuzz" max_len=65536
  if [[ ! -d Sources/AppReceipt || ! -d "$harness" ]]; then
    echo "   skipped: Sources/AppReceipt and $harness do not both exist yet"
    return 3
  fi
  build_library CryptoPrimitives "$work" -I Sources/COpenSSL $(swift_sources Sources/CryptoPrimitives)
  mapfile -t sources < <(swift_sources Sources/AppReceipt Fuzz/Support "$harness")
  build_fuzzer "$binary" AppReceipt -I Sources/COpenSSL -I "$work/modules" "${sources[@]}" "$work/libCryptoPrimitives.a"
  run_env=(ASAN_OPTIONS=detect_leaks=1)
}

# run_target TARGET: fuzzes for $seconds; records one summary line.
summary=()
failed=()
run_target() {
  local target="$1" work="$out/$1" status=0 before after stats
  local log="$work/fuzz.log"
  mkdir -p "$work/corpus" "$work/crashes"
  before=$(find "$work/crashes" -type f | wc -l)
  echo "== fuzz $target for ${seconds}s (log: $log)"
  # Swift's own crash backtracer reads memory ASan calls poisoned and would
  # bury the precondition in a bogus report; libFuzzer's handler suffices.
  run_env+=(SWIFT_BACKTRACE=enable=no)
  echo "# env ${run_env[*]} $binary" >"$log"
  env "${run_env[@]}" timeout -k 10 $((seconds + 120)) "$binary" \
    -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/crashes/" "${libfuzzer_args[@]}" \
    "$work/corpus" "$harness/seeds" >>"$log" 2>&1 || status=$?
  after=$(find "$work/crashes" -type f | wc -l)
  stats="$(grep -E '^#[0-9]+.*cov:' "$log" | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' || true)"
  stats+=", $(grep -oE 'average_exec_per_sec: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?') exec/s"
  stats+=", $(grep -oE 'number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?') runs"
  if ((status != 0 || after > before)); then
    failed+=("$target")
    summary+=("$target: FOUND (exit $status, $((after - before)) new in $work/crashes) $stats")
    echo "-- $target found something; the end of $log:"
    grep -E -A30 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|Fatal error|deadly signal' "$log" | head -60 || tail -40 "$log"
  else
    summary+=("$target: ok $stats")
    echo "-- $target: $stats"
  fi
}

for target in "${targets[@]}"; do
  echo "== build $target (-sanitize=fuzzer,address)"
  skip=0
  prepare_"$target" || skip=$?
  if ((skip == 3)); then
    summary+=("$target: skipped")
    continue
  fi
  ((skip == 0)) || exit 2
  run_target "$target"
done

echo "== summary (${seconds}s per target)"
printf '  %s\n' "${summary[@]}"
if ((${#failed[@]})); then
  echo "findings in: ${failed[*]}" >&2
  exit 1
fi
