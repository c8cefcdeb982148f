#!/usr/bin/env python3
"""How long one commit's fsync takes on this disk, and how often it stalls.

Writes 8 kB at offset 0 of a scratch file and fdatasyncs it, in a loop, for
SECONDS (default 20): what PostgreSQL does for each commit's WAL flush with
wal_sync_method=fdatasync. Prints the count, p50, p99, p99.9 and max, and how
many syncs took over 20 and 50 ms. A verify p99 above 50 ms in
bench/gateway/run.sh on a run where this shows syncs over 50 ms is the disk's:
every purchase in flight waits for the stalled commit.

Usage: bench/disk/fsync-latency.py [SECONDS] [DIRECTORY]  (default: .data)
"""
import os
import sys
import time

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
directory = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "..", ".data")
os.makedirs(directory, exist_ok=True)
path = os.path.join(directory, f"fsync-latency-{os.getpid()}.tmp")
block = b"\0" * 8192
latencies = []
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
try:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        start = time.perf_counter()
        os.pwrite(fd, block, 0)
        os.fdatasync(fd)
        latencies.append(time.perf_counter() - start)
finally:
    os.close(fd)
    os.unlink(path)

latencies.sort()
count = len(latencies)
def at(fraction):
    return latencies[min(count - 1, int(count * fraction))] * 1000
print(f"fdatasync of 8 kB, {seconds:g} s: {count} syncs, p50 {at(0.5):.3f} ms, p99 {at(0.99):.3f} ms, "
      f"p99.9 {at(0.999):.3f} ms, max {latencies[-1] * 1000:.1f} ms; "
      f"over 20 ms: {sum(1 for x in latencies if x > 0.020)}, over 50 ms: {sum(1 for x in latencies if x > 0.050)}")
