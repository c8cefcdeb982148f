#!/usr/bin/env python3
"""Where a coalesced balance call's time goes, hop by hop, from a trace of
scheduler and syscall tracepoints taken by bench/gateway/run.sh with
GATEWAY_BENCH_PERF=DIR GATEWAY_BENCH_PERF_SCHED=1 GATEWAY_BENCH_PHASES=balance.

One cycle: the gateway sends a GetBalances call to PointsService; PointsService
wakes, sends its statement to PostgreSQL; the backend answers; PointsService
reads it and answers the gateway; the gateway reads the answer and sends the
next call. The sockets are found from the trace itself (the gateway's send
that wakes PointsService, PointsService's that wake the gateway and the
backend). Prints each step's median, mean, p10 and p90 in microseconds.

Usage: bench/gateway/call-timeline.py DIR/balance.data"""
import collections, re, statistics, subprocess, sys

SENDTO, READ, RECVFROM, EPOLL_WAIT = 44, 0, 45, 232
LINE = re.compile(r"^\s*(\S.*?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s+(.*)$")
ENTER = re.compile(r"NR (\d+) \(([0-9a-f]+)")
EXIT = re.compile(r"NR (\d+) = (-?\d+)")


def events(data):
    text = subprocess.run(["perf", "script", "-i", data], capture_output=True, text=True, check=True).stdout
    for line in text.splitlines():
        match = LINE.match(line)
        if match and match.group(1) != "perf":
            comm, tid, _, time, name, rest = match.groups()
            yield float(time) * 1e6, comm, int(tid), name, rest


def busiest_thread(trace, comm):
    counts = collections.Counter(tid for _, c, tid, _, _ in trace if c == comm)
    if not counts:
        sys.exit(f"no {comm} thread in the trace")
    return counts.most_common(1)[0][0]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    trace = list(events(sys.argv[1]))
    gateway, points = busiest_thread(trace, "Gateway"), busiest_thread(trace, "PointsService")
    # The sockets: which send of one thread woke which other thread.
    entered, woke = {}, collections.Counter()
    for _, comm, tid, name, rest in trace:
        if name == "raw_syscalls:sys_enter":
            match = ENTER.match(rest)
            entered[tid] = (int(match.group(1)), int(match.group(2), 16))
        elif name == "sched:sched_wakeup" and tid in entered and entered[tid][0] == SENDTO:
            target = int(re.search(r"pid=(\d+)", rest).group(1))
            woke[(tid, entered[tid][1], "points" if target == points else "gateway" if target == gateway else "other")] += 1
    def socket(sender, target):
        found = [(count, fd) for (tid, fd, to), count in woke.items() if tid == sender and to == target]
        if not found:
            sys.exit(f"no send of thread {sender} woke the {target} thread")
        return max(found)[1]
    to_points, to_gateway = socket(gateway, "points"), socket(points, "gateway")
    to_database = socket(points, "other")
    # The steps of each cycle, in order.
    marks, entered = [], {}
    for time, comm, tid, name, rest in trace:
        if name == "raw_syscalls:sys_enter":
            match = ENTER.match(rest)
            number, fd = int(match.group(1)), int(match.group(2), 16)
            entered[tid] = (number, fd)
            if number == SENDTO:
                if tid == gateway and fd == to_points: marks.append((time, "call sent"))
                elif tid == points and fd == to_database: marks.append((time, "statement sent"))
                elif tid == points and fd == to_gateway: marks.append((time, "answer sent"))
                elif comm == "postgres": marks.append((time, "rows sent"))
        elif name == "raw_syscalls:sys_exit" and tid in entered:
            number, fd = entered[tid]
            if int(EXIT.match(rest).group(2)) <= 0:
                continue
            if tid == points and number == EPOLL_WAIT: marks.append((time, "points woke"))
            elif tid == points and number in (READ, RECVFROM) and fd == to_database: marks.append((time, "rows read"))
            elif tid == gateway and number in (READ, RECVFROM) and fd == to_points: marks.append((time, "answer read"))
    order = ["call sent", "points woke", "statement sent", "rows sent", "rows read", "answer sent", "answer read"]
    cycles, index = [], 0
    while index < len(marks):
        if marks[index][1] != "call sent":
            index += 1
            continue
        times, cursor = [marks[index][0]], index + 1
        for step in order[1:]:
            while cursor < len(marks) and marks[cursor][1] not in (step, "call sent"):
                cursor += 1
            if cursor >= len(marks) or marks[cursor][1] != step:
                break
            times.append(marks[cursor][0])
            cursor += 1
        if len(times) < len(order):
            index += 1
            continue
        while cursor < len(marks) and marks[cursor][1] != "call sent":
            cursor += 1
        if cursor >= len(marks):
            break
        times.append(marks[cursor][0])
        cycles.append(times)
        index = cursor
    if not cycles:
        sys.exit("no complete cycle in the trace")
    labels = ["gateway sends -> PointsService wakes", "PointsService: woke -> statement sent",
              "PostgreSQL: statement -> rows sent", "rows sent -> PointsService reads them",
              "PointsService: rows read -> answer sent", "answer sent -> gateway reads it",
              "gateway: answer read -> next call sent", "the whole cycle"]
    print(f"{len(cycles)} cycles (gateway thread {gateway}, PointsService thread {points}; "
          f"sockets: gateway->points {to_points}, points->gateway {to_gateway}, points->postgres {to_database})")
    print(f"{'step':44s} {'median':>7s} {'mean':>7s} {'p10':>7s} {'p90':>7s}  (us)")
    for step, label in enumerate(labels):
        spans = sorted(c[step + 1] - c[step] for c in cycles) if step < 7 else sorted(c[7] - c[0] for c in cycles)
        print(f"{label:44s} {statistics.median(spans):7.1f} {statistics.mean(spans):7.1f} "
              f"{spans[len(spans) // 10]:7.1f} {spans[9 * len(spans) // 10]:7.1f}")


main()
