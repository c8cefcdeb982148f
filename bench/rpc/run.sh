#!/usr/bin/env bash
# Benchmarks RPCRuntime's unary path: h2load drives testing.v1.Echo/Unary on
# the Swift EchoServer (release build) over h2c. Bounded in count and time.
# Usage: bench/rpc/run.sh [requests=100000] [clients=4] [streams-per-client=64]
# Results go to bench/out/rpc-<timestamp>.txt (ignored by git).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
requests="${1:-100000}"
clients="${2:-4}"
streams="${3:-64}"
command -v h2load >/dev/null || { echo "h2load missing: apt-get install nghttp2-client" >&2; exit 2; }

swift build -c release --product EchoServer --package-path "$root" >/dev/null
binary="$root/.build/release/EchoServer"
out_dir="$root/bench/out"
mkdir -p "$out_dir"
work="$(mktemp -d)"
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

# EchoRequest{message: "hello"} = 0a 05 68 65 6c 6c 6f, behind the 5-byte gRPC prefix.
printf '\x00\x00\x00\x00\x07\x0a\x05hello' > "$work/request.bin"

"$binary" --listen 127.0.0.1:0 > "$work/server.out" &
server_pid=$!
for _ in $(seq 1 100); do
  grep -q "listening on" "$work/server.out" 2>/dev/null && break
  sleep 0.05
done
address="$(sed -n 's/^listening on //p' "$work/server.out")"
[[ -n "$address" ]] || { echo "EchoServer did not start" >&2; exit 1; }

result="$out_dir/rpc-$(date +%Y%m%dT%H%M%S).txt"
timeout 300 h2load -n "$requests" -c "$clients" -m "$streams" \
  -d "$work/request.bin" \
  -H 'content-type: application/grpc' -H 'te: trailers' \
  "http://$address/testing.v1.Echo/Unary" | tee "$result"
echo "saved $result"
