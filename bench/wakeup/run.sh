#!/usr/bin/env bash
# The price of a wake-up on this machine: loopback TCP round trips between
# two processes that wait in epoll, both blocking (as the services do), one
# polling, both polling (bench/wakeup/pingpong.c). On a virtual machine a
# sleeping vCPU is woken by an interrupt through the hypervisor, which the
# difference between the three rows shows. PERFORMANCE.md ("Session 13")
# uses it to explain why GET balance at 16 connections is bound by one
# coalesced call's latency. Bounded: 3 x 3 runs of 20,000 round trips.
#
# Usage: bench/wakeup/run.sh [round-trips=20000]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
count="${1:-20000}"
[[ "$count" =~ ^[0-9]+$ ]] && ((count >= 100 && count <= 1000000)) || { echo "round-trips must be 100...1000000" >&2; exit 2; }
compiler="$(command -v cc || command -v gcc || command -v clang)" || { echo "needs a C compiler" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$compiler" -O2 -o "$work/pingpong" "$root/bench/wakeup/pingpong.c"
for _ in 1 2 3; do
  for mode in 0 1 2; do timeout 120 "$work/pingpong" "$mode" "$count"; done
done
