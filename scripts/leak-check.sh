#!/usr/bin/env bash
# Memory checks for the RPC runtime (see docs/MEMORY.md for how to read them).
#
#   scripts/leak-check.sh [all|asan|growth]      (default: all)
#
# asan    Builds everything with AddressSanitizer + LeakSanitizer into
#         .build-asan (separate scratch path; the normal .build is untouched)
#         and runs RPCCoreTests, RPCRuntimeTests, HTTPServerTests, ContractsTests, AppStoreVerificationTests (OpenSSL X.509,
#         OCSP and CMS), PostgresClientTests, PostgresClientIntegrationTests and PointsServiceIntegrationTests
#         under it (PostgresClientIntegrationTests on the private cluster, scripts/pg.sh).
#         Then runs the ASan EchoServer through one round of the bad-input
#         hammer below plus h2load, stops it with SIGTERM and reads its
#         exit-time leak report. Fails on any AddressSanitizer error and on
#         any LeakSanitizer report (no suppressions are needed today: if a
#         toolchain-internal leak ever shows up, add it to the suppressions
#         written by write_suppressions below, with a reason).
# growth  Starts a release EchoServer and runs $GROWTH_ROUNDS rounds (default 6)
#         of: the bad-input hammer (garbage preface, truncated length prefix,
#         oversized length prefix, RST_STREAM mid-call, disconnect mid-call,
#         11 x 910 abandoned streams, one rapid-reset flood) plus h2load
#         normal load ($GROWTH_REQUESTS requests, default 20000), reading
#         VmRSS from /proc/PID/status after each round. Fails when the server
#         dies, when a health call fails after a round, or when RSS grows by
#         more than $GROWTH_LIMIT_KIB (default 4096 KiB) between round 3 and
#         the last round (rounds 1-2 are warm-up: allocator arenas, caches).
# Bounded: every step has a timeout; "growth" takes about a minute, "asan"
# mostly compile time (the first build takes several minutes on 2 cores).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mode="${1:-all}"
rounds="${GROWTH_ROUNDS:-6}"
requests="${GROWTH_REQUESTS:-20000}"
limit_kib="${GROWTH_LIMIT_KIB:-4096}"
[[ "$rounds" =~ ^[0-9]+$ ]] && ((rounds >= 4 && rounds <= 20)) || { echo "GROWTH_ROUNDS must be 4...20" >&2; exit 2; }
[[ "$requests" =~ ^[0-9]+$ ]] && ((requests >= 1 && requests <= 500000)) || { echo "GROWTH_REQUESTS must be 1...500000" >&2; exit 2; }
case "$mode" in all|asan|growth) ;; *) sed -n '2,27p' "$0"; exit 2 ;; esac
for tool in python3 h2load timeout; do
  command -v "$tool" >/dev/null || { echo "missing tool: $tool (scripts/install-deps.sh; h2load is in nghttp2-client)" >&2; exit 2; }
done

work="$(mktemp -d)"
server_pid=""
stop_server() {
  if [[ -n "$server_pid" ]]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
trap 'stop_server; rm -rf "$work"' EXIT

# --- The bad-input hammer (a port of Tests/RPCRuntimeTests' raw-socket cases) ----
cat > "$work/hammer.py" <<'PY'
"""Raw HTTP/2 bad input against a gRPC server; every socket has a timeout.
usage: hammer.py PORT  -> exits 0 when the server answered the final health call."""
import socket, struct, sys

PORT = int(sys.argv[1])
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
PATH = "/testing.v1.Echo/Unary"

def frame(kind, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload

def header_block(fields):
    out = b""
    for name, value in fields:  # literal without indexing, no Huffman
        n, v = name.encode(), value.encode()
        assert len(n) < 127 and len(v) < 127
        out += b"\x00" + bytes([len(n)]) + n + bytes([len(v)]) + v
    return out

REQUEST = header_block([(":method", "POST"), (":scheme", "http"), (":path", PATH), (":authority", "localhost"),
                        ("content-type", "application/grpc"), ("te", "trailers")])

def connect():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    s.settimeout(5)
    return s

def start(s):
    s.sendall(PREFACE + frame(0x4, 0, 0, b""))

def headers(stream, end=False):
    return frame(0x1, 0x4 | (0x1 if end else 0), stream, REQUEST)

def data(stream, payload, end):
    return frame(0x0, 0x1 if end else 0, stream, payload)

def drain(s, limit_bytes=1 << 20):
    """Reads until the peer closes, the timeout passes or limit_bytes arrived."""
    total = 0
    try:
        while total < limit_bytes:
            chunk = s.recv(65536)
            if not chunk:
                return True
            total += len(chunk)
    except (socket.timeout, ConnectionError):
        pass
    return False

def read_until_stream_ends(s, stream):
    """Reads frames until `stream` ends (END_STREAM / RST_STREAM) or GOAWAY; returns the frames seen."""
    buffer, seen = b"", []
    while True:
        while len(buffer) >= 9:
            length = int.from_bytes(buffer[0:3], "big")
            if len(buffer) < 9 + length:
                break
            kind, flags, sid = buffer[3], buffer[4], int.from_bytes(buffer[5:9], "big") & 0x7FFFFFFF
            payload = buffer[9:9 + length]
            buffer = buffer[9 + length:]
            seen.append((kind, flags, sid, payload))
            if kind == 0x4 and not flags & 0x1:
                s.sendall(frame(0x4, 0x1, 0, b""))
            if kind == 0x7 or (sid == stream and (kind == 0x3 or flags & 0x1)):
                return seen
        chunk = s.recv(65536)
        if not chunk:
            return seen
        buffer += chunk

def close(s):
    try:
        s.close()
    except OSError:
        pass

def garbage_preface():
    s = connect()
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\ngarbage garbage garbage")
    drain(s); close(s)

def one_stream(*frames_after_headers, end_headers=False):
    s = connect(); start(s)
    s.sendall(headers(1, end=end_headers) + b"".join(frames_after_headers))
    read_until_stream_ends(s, 1); close(s)

def truncated_prefix():
    one_stream(data(1, b"\x00\x00\x00", True))

def prefix_longer_than_body():
    one_stream(data(1, b"\x00\x00\x00\x00\x0a\x01\x02", True))

def oversized_prefix():
    one_stream(data(1, b"\x00\x04\x00\x00\x00", False))  # announces 64 MiB, keeps the stream open

def reset_mid_call():
    s = connect(); start(s)
    s.sendall(headers(1) + data(1, b"\x00\x00\x00\x00\x07", False))
    s.sendall(frame(0x3, 0, 1, struct.pack(">I", 0x8)))
    close(s)

def disconnect_mid_call():
    s = connect(); start(s)
    s.sendall(headers(1) + data(1, b"\x00\x00\x00\x00\x07\x0a\x05he", False))
    close(s)

def abandon_streams(count):
    """`count` streams opened and reset at once, one real call, 50 streams left open, hang up."""
    s = connect(); start(s)
    stream, batch = 1, []
    for _ in range(count):
        batch.append(frame(0x1, 0x4, stream, REQUEST) + frame(0x3, 0, stream, struct.pack(">I", 0x8)))
        stream += 2
        if len(batch) >= 200:
            s.sendall(b"".join(batch)); batch = []
    if batch:
        s.sendall(b"".join(batch))
    s.sendall(headers(stream) + data(stream, b"\x00\x00\x00\x00\x04\x0a\x02ok", True))
    seen = read_until_stream_ends(s, stream)
    stream += 2
    try:
        s.sendall(b"".join(headers(stream + 2 * i) for i in range(50)))
    except OSError:
        pass
    close(s)
    return seen

def healthy_call():
    s = connect(); start(s)
    s.sendall(headers(1) + data(1, b"\x00\x00\x00\x00\x07\x0a\x05hello", True))
    seen = read_until_stream_ends(s, 1); close(s)
    return any(sid == 1 and kind == 0x0 and b"hello" in payload for kind, _, sid, payload in seen)

def answered(seen):
    return any(kind == 0x0 and b"ok" in payload for kind, _, _, payload in seen)

def went_away(seen):
    return any(kind == 0x7 for kind, _, _, _ in seen)

for _ in range(50):
    garbage_preface(); truncated_prefix(); prefix_longer_than_body(); oversized_prefix()
    reset_mid_call(); disconnect_mid_call()
for _ in range(11):
    # 11 x 910 >= 10,000 abandoned streams, under the reset-burst limit: the real call is answered.
    if not answered(abandon_streams(910)):
        sys.exit("abandoned streams: the real call after 910 resets was not answered")
if not went_away(abandon_streams(10_000)):
    sys.exit("rapid-reset flood: no GOAWAY")   # nghttp2's defence ends the session
if not healthy_call():
    sys.exit("final health call: no echo")
PY

# EchoRequest{message: "hello"} behind the 5-byte gRPC prefix, for h2load.
printf '\x00\x00\x00\x00\x07\x0a\x05hello' > "$work/request.bin"
h2load_normal() {
  timeout 120 h2load -n "$1" -c 4 -m 16 -t 1 -d "$work/request.bin" -H 'content-type: application/grpc' -H 'te: trailers' \
    "http://$address/testing.v1.Echo/Unary" > "$work/h2load.out" 2>&1 \
    || { echo "h2load failed:" >&2; cat "$work/h2load.out" >&2; return 1; }
  grep -q "requests: $1 total, $1 started, $1 done, $1 succeeded" "$work/h2load.out" \
    || { echo "h2load: not every request succeeded:" >&2; grep '^requests:' "$work/h2load.out" >&2; return 1; }
}

# start_server BINARY: starts it on 127.0.0.1:0, sets $server_pid and $address.
start_server() {
  "$1" --listen 127.0.0.1:0 > "$work/server.out" 2> "$work/server.err" &
  server_pid=$!
  address=""
  for _ in $(seq 1 200); do
    address="$(sed -n 's/^listening on //p' "$work/server.out" 2>/dev/null)"
    [[ -n "$address" ]] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.05
  done
  echo "EchoServer did not start:" >&2; cat "$work/server.err" >&2; exit 1
}
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$server_pid/status"; }

# --- asan ----------------------------------------------------------------------------
write_suppressions() {
  # LeakSanitizer suppressions: one `leak:<frame>` per line, each with its reason.
  cat > "$work/lsan.supp" <<'SUPP'
# Swift weak-reference side tables. An object that ever had a weak reference
# points to its side table from its refcount word, shifted and tagged, so
# LeakSanitizer cannot see that pointer and reports every live side table as
# a direct leak (e.g. XCTest's awaitUsingExpectation, ClientTarget.connect).
leak:formWeakReference
# corelibs Foundation, in test processes that start services: the bundle list
# Bundle.allBundles builds (TestSupport's ServiceProcess finds the products
# directory with it) and the buffer String(contentsOfFile:) reads into. Both
# are toolchain allocations with no frame of ours below them.
leak:_CFBundleCopyAllBundles
leak:readBytesFromFile
SUPP
}

# leak_sites LOG: the allocation sites in Sources/ of the leaks in LOG, most frequent first.
leak_sites() {
  python3 - "$1" <<'PY'
import collections, re, sys
text = open(sys.argv[1], errors="replace").read()
sites = collections.Counter()
for block in re.split(r"\n(?=(?:Direct|Indirect) leak of)", text)[1:]:
    head = block.split("\n", 1)[0]
    count = int(re.search(r"in (\d+) object", head).group(1))
    ours = re.findall(r"in (\S+) (/\S*/Sources/\S+)", block)
    site = ours[0][1].split("/Sources/", 1)[1] if ours else "(no frame in Sources/: toolchain or XCTest)"
    sites[("direct" if head.startswith("Direct") else "indirect", site)] += count
for (kind, site), count in sites.most_common(12):
    print(f"    {count:6d} {kind:8s} {site}")
PY
}

# leaked_bytes LOG: the byte count of LeakSanitizer's SUMMARY line, 0 without one.
leaked_bytes() { sed -n 's/^SUMMARY: AddressSanitizer: \([0-9]*\) byte(s) leaked.*/\1/p' "$1" | tail -1 | grep . || echo 0; }

run_asan() {
  local scratch="$root/.build-asan" status=0
  echo "asan: building with --sanitize=address into .build-asan" >&2
  timeout 3600 swift build --build-tests --sanitize=address --scratch-path "$scratch" --package-path "$root" > "$work/asan-build.log" 2>&1 \
    || { echo "asan build failed:" >&2; tail -40 "$work/asan-build.log" >&2; return 1; }
  write_suppressions
  export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1"
  export LSAN_OPTIONS="suppressions=$work/lsan.supp:print_suppressions=0"
  # Into a variable first, and its failure returned by hand: this function
  # runs in `run_asan || status=1`, where set -e is off.
  local pg_env
  pg_env="$(timeout 120 "$root/scripts/pg.sh" start | sed 's/^/export /')" \
    || { echo "asan: scripts/pg.sh start failed" >&2; return 1; }
  eval "$pg_env"
  local skip=()
  if [[ ! -x "$root/.venv/bin/python" ]]; then
    echo "asan: no .venv (scripts/install-deps.sh): skipping PythonServerInteropTests" >&2
    skip=(--skip PythonServerInteropTests)
  fi
  # In a test process corelibs XCTest keeps every XCTestCase alive to the end,
  # and with it every server and client a test stored in a property: those show
  # up as indirect leaks at exit and say nothing about the code. So the test
  # runs fail on AddressSanitizer errors and on direct leaks (memory nothing
  # points to any more: a C allocation without an owner, a lost buffer);
  # indirect leaks are listed for reading. Retain cycles in the runtime are
  # the job of the EchoServer checks below (idle vs hammered) and of "growth".
  # PointsServiceIntegrationTests run the ASan PointsService as subprocesses;
  # PointsRPCTests and PointsAuthorizationTests stop theirs with SIGTERM and
  # check for exit status 0, which an AddressSanitizer error or a leak report
  # at exit turns into a failure.
  for target in RPCCoreTests RPCRuntimeTests HTTPServerTests ContractsTests AppStoreVerificationTests PostgresClientTests PostgresClientIntegrationTests \
                PointsServiceIntegrationTests; do
    echo "asan: swift test --filter $target" >&2
    local log="$work/asan-$target.log" rc=0
    (cd "$root" && timeout 900 swift test --skip-build --sanitize=address --scratch-path "$scratch" \
       --filter "$target" "${skip[@]}") > "$log" 2>&1 || rc=$?
    local executed failures
    executed="$(grep -E 'Executed [0-9]+ tests' "$log" | tail -1 | sed 's/^[[:space:]]*//')"
    failures="$(grep -cE "^Test Case '.*' failed" "$log" || true)"
    if grep -q 'ERROR: AddressSanitizer' "$log" || grep -q '^Direct leak' "$log"; then
      echo "asan: $target: FAIL: AddressSanitizer error or direct leak:" >&2
      grep -m1 -A30 -E 'ERROR: AddressSanitizer|^Direct leak' "$log" >&2
      leak_sites "$log" >&2
      status=1
    elif ((failures > 0)) || [[ -z "$executed" ]]; then
      echo "asan: $target: FAIL: $failures failing tests (rc=$rc) $executed" >&2
      grep -E "^Test Case '.*' failed|error:" "$log" | head -20 >&2
      status=1
    else
      echo "asan: $target: no AddressSanitizer error, no direct leak ($executed); indirect at exit: $(leaked_bytes "$log") bytes"
      leak_sites "$log"
    fi
  done
  # EchoServer: leaks at exit after an idle life vs after a hammer round and
  # h2load. Anything per connection or per stream makes the second larger.
  local idle_bytes hammered_bytes
  echo "asan: EchoServer idle: start, SIGTERM" >&2
  start_server "$scratch/debug/EchoServer"
  sleep 1
  stop_server
  cp "$work/server.err" "$work/echo-idle.err"
  idle_bytes="$(leaked_bytes "$work/echo-idle.err")"
  echo "asan: EchoServer hammered: one hammer round + h2load 5000, SIGTERM" >&2
  start_server "$scratch/debug/EchoServer"
  timeout 300 python3 "$work/hammer.py" "${address##*:}" || { echo "asan: EchoServer: hammer check failed" >&2; status=1; }
  h2load_normal 5000 || status=1
  stop_server
  cp "$work/server.err" "$work/echo-hammered.err"
  hammered_bytes="$(leaked_bytes "$work/echo-hammered.err")"
  echo "asan: EchoServer leaked at exit: idle $idle_bytes bytes, hammered $hammered_bytes bytes"
  leak_sites "$work/echo-hammered.err"
  if grep -q 'ERROR: AddressSanitizer' "$work/echo-idle.err" "$work/echo-hammered.err"; then
    echo "asan: EchoServer: FAIL: AddressSanitizer error:" >&2; grep -h -A30 'ERROR: AddressSanitizer' "$work"/echo-*.err | head -40 >&2; status=1
  elif ((hammered_bytes > idle_bytes)); then
    echo "asan: EchoServer: FAIL: bad input and load leave more behind than an idle run" >&2
    status=1
  fi
  return "$status"
}

# --- growth --------------------------------------------------------------------------
run_growth() {
  echo "growth: building EchoServer (release)" >&2
  # `|| return 1` by hand: this function runs in `run_growth || status=1`,
  # where set -e is off, and a failed build would measure a stale binary.
  timeout 900 "$root/scripts/build-release.sh" --product EchoServer --package-path "$root" >/dev/null \
    || { echo "growth: the release build of EchoServer failed" >&2; return 1; }
  start_server "$root/.build/release/EchoServer"
  local port="${address##*:}" round rss baseline=0 last=0
  local -a samples=()
  echo "growth: round 0 (idle) VmRSS $(rss_kib) KiB"
  for round in $(seq 1 "$rounds"); do
    timeout 300 python3 "$work/hammer.py" "$port" || { echo "growth: round $round: final health call failed" >&2; return 1; }
    h2load_normal "$requests" || return 1
    kill -0 "$server_pid" 2>/dev/null || { echo "growth: EchoServer died in round $round" >&2; cat "$work/server.err" >&2; return 1; }
    sleep 1   # let closed connections finish tearing down
    rss="$(rss_kib)"
    samples+=("$rss")
    echo "growth: round $round VmRSS $rss KiB"
  done
  baseline="${samples[2]}"
  last="${samples[-1]}"
  local max=0 sample
  for sample in "${samples[@]:2}"; do ((sample > max)) && max="$sample"; done
  echo "growth: rounds 3..$rounds: from $baseline KiB to $last KiB (max $max KiB); limit +$limit_kib KiB"
  if ((max - baseline > limit_kib)); then
    echo "growth: FAIL: RSS grew by $((max - baseline)) KiB after warm-up" >&2
    return 1
  fi
  echo "growth: ok"
}

status=0
if [[ "$mode" == all || "$mode" == growth ]]; then run_growth || status=1; stop_server; fi
if [[ "$mode" == all || "$mode" == asan ]]; then run_asan || status=1; fi
exit "$status"
