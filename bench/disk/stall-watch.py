#!/usr/bin/env python3
"""Watches a block device for stalls without adding any I/O of its own.

Samples /proc/diskstats every 5 ms for SECONDS (default 20): a stall is a
stretch in which the device had requests in flight and completed none of
them (reads, writes, discards and cache flushes all counted). A commit's
WAL fsync caught in one waits at least that long, and so does every
purchase whose commit queues behind it. bench/gateway/run.sh runs it during
its verify phase (docs/PERFORMANCE.md, "Session 16"); bench/disk/
fsync-latency.py measures the same stalls by syncing, which adds load.

Usage: bench/disk/stall-watch.py [SECONDS] [DIRECTORY]   (SIGTERM ends it early)
Watches the disk that holds DIRECTORY (default: the cluster's, .data or
$IAP_DATA_DIR); a directory on no block device (tmpfs) has no stalls to see,
and the summary says so. Prints each stall of 20 ms or more (its start
and length) on stderr and one summary line on stdout:
  disk DEV, S s: N stalls over 20 ms, M over 50 ms, longest X ms, Y ms stalled in all
"""
import os
import signal
import sys
import time

THRESHOLD_MS = 20.0
LONG_MS = 50.0
INTERVAL_S = 0.005


def device_of(path):
    """The whole-disk name (e.g. vda) under `path`'s filesystem, or None."""
    st = os.stat(path)
    sys_dev = f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    if not os.path.exists(sys_dev):
        return None
    real = os.path.realpath(sys_dev)
    # A partition's directory sits inside its disk's directory.
    if os.path.exists(os.path.join(real, "partition")):
        real = os.path.dirname(real)
    return os.path.basename(real)


class DiskStats:
    """/proc/diskstats, kept open and read again from the start per sample."""

    def __init__(self, device):
        self.device = device
        self.marker = f" {device} ".encode()
        self.file = open("/proc/diskstats", "rb", buffering=0)

    def read(self):
        """(operations completed, requests in flight) of the device."""
        self.file.seek(0)
        text = self.file.read(65536)
        at = text.find(self.marker)
        if at < 0:
            raise SystemExit(f"no device {self.device} in /proc/diskstats")
        values = [int(v) for v in text[at + len(self.marker):text.index(b"\n", at)].split()]
        completed = values[0] + values[4]
        if len(values) >= 12:
            completed += values[11]
        if len(values) >= 16:
            completed += values[15]
        return completed, values[8]


class Stop(Exception):
    """Raised by SIGTERM: the watch ends and prints what it saw."""


def stop(_signal, _frame):
    raise Stop


def main():
    signal.signal(signal.SIGTERM, stop)
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    directory = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("IAP_DATA_DIR") or os.path.join(root, ".data")
    device = device_of(directory if os.path.isdir(directory) else root)
    if device is None:
        print(f"disk: {directory} is on no block device, no stalls to watch")
        return
    stalls = []
    stats = DiskStats(device)
    completed, in_flight = stats.read()
    stall_start = time.monotonic() if in_flight > 0 else None
    end = time.monotonic() + seconds

    def close_stall(now):
        length_ms = (now - stall_start) * 1000
        if length_ms >= THRESHOLD_MS:
            stalls.append(length_ms)
            began = time.strftime("%H:%M:%S", time.localtime(time.time() - (now - stall_start)))
            print(f"disk {device} stalled {length_ms:.0f} ms from {began}", file=sys.stderr, flush=True)

    try:
        while True:
            time.sleep(INTERVAL_S)
            now = time.monotonic()
            now_completed, now_in_flight = stats.read()
            progressed = now_completed != completed
            completed = now_completed
            if stall_start is not None and (progressed or now_in_flight == 0):
                close_stall(now)
                stall_start = None
            if stall_start is None and now_in_flight > 0 and not progressed:
                # In flight and nothing completed since the last sample: the
                # stall began at most one interval ago; count from this sample.
                stall_start = now
            if now >= end:
                break
    except Stop:
        # SIGTERM ends the watch early (bench/gateway/run.sh, at its phase's end).
        seconds = seconds - (end - time.monotonic())
    if stall_start is not None:
        close_stall(time.monotonic())
    long = [s for s in stalls if s >= LONG_MS]
    print(f"disk {device}, {seconds:.1f} s: {len(stalls)} stalls over {THRESHOLD_MS:.0f} ms, "
          f"{len(long)} over {LONG_MS:.0f} ms, longest {max(stalls, default=0):.0f} ms, "
          f"{sum(stalls):.0f} ms stalled in all")


if __name__ == "__main__":
    main()
