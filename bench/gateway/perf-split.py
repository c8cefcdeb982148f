#!/usr/bin/env python3
"""Splits a system-wide `perf record -a -g` of one bench/gateway/run.sh phase
(GATEWAY_BENCH_PERF=DIR) by process: share of all samples, by library,
kernel entry (syscall), top symbols (demangled with `swift demangle` when
present), and for PostgreSQL the inclusive share of a few executor and
commit functions.

Usage: bench/gateway/perf-split.py DIR/PHASE.data [top-symbols=15]
(reads DIR/PHASE.pids, written by run.sh; runs `perf script` once)."""
import collections, re, shutil, subprocess, sys

data = sys.argv[1]
top = int(sys.argv[2]) if len(sys.argv) > 2 else 15
owner = {}
for line in open(data[:-len(".data")] + ".pids"):
    name, pids = line.split()
    for pid in pids.split(","):
        owner[int(pid)] = name

script = subprocess.run(["perf", "script", "-i", data, "-F", "pid,tid,ip,sym,dso"],
                        capture_output=True, text=True, check=True).stdout
samples, current = [], None
for line in script.splitlines():
    if not line.strip():
        if current: samples.append(current)
        current = None
        continue
    head = re.match(r"^\s*(\d+)/(\d+)\s+", line)
    frame = re.match(r"^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$", line)
    if head and not line.startswith("\t") and current is None:
        current = (int(head.group(1)), [])
        rest = line[head.end():]
        frame = re.match(r"^[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$", rest)
    if current is not None and frame:
        current[1].append((frame.group(1), frame.group(2).split("/")[-1]))
if current: samples.append(current)
total = len(samples)

def demangle(names):
    if not shutil.which("swift"): return names
    out = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(names), capture_output=True, text=True).stdout.splitlines()
    return out if len(out) == len(names) else names

by_process = collections.defaultdict(list)
for pid, frames in samples:
    by_process[owner.get(pid, "idle" if pid == 0 else "other")].append(frames)
print(f"{total} samples")
postgres_functions = ["PortalRun", "standard_ExecutorRun", "ExecConstraints", "stringToNode", "ExecInitNode",
                      "CommitTransactionCommand", "XLogFlush", "heap_insert", "heap_update", "GetCachedPlan",
                      "pglz_compress", "pq_getbyte", "secure_write"]
for name in ["Gateway", "PaymentsService", "PointsService", "postgres", "idle", "other"]:
    stacks = [s for s in by_process[name] if s]
    n = len(stacks)
    if not n: continue
    print(f"== {name}: {n} samples, {100 * n / total:.1f}% of all")
    if name in ("idle", "other"): continue
    libraries = collections.Counter(s[0][1] for s in stacks)
    print("   by library (leaf): " + ", ".join(f"{k} {100 * v / n:.0f}%" for k, v in libraries.most_common(7)))
    entries = collections.Counter()
    for s in stacks:
        calls = [f for f, _ in s if f.startswith("__x64_sys_")]
        entries[calls[-1][len("__x64_sys_"):] if calls else ("kernel, no syscall" if s[0][1] == "[kernel.kallsyms]" else "user")] += 1
    print("   where (outermost syscall): " + ", ".join(f"{k} {100 * v / n:.0f}%" for k, v in entries.most_common(7)))
    if name == "postgres":
        print("   inclusive: " + ", ".join(
            f"{f} {100 * sum(1 for s in stacks if any(x == f for x, _ in s)) / n:.1f}%" for f in postgres_functions))
    leaves = collections.Counter(f"{s[0][0]} [{s[0][1]}]" for s in stacks).most_common(top)
    for (symbol, count), shown in zip(leaves, demangle([k for k, _ in leaves])):
        print(f"   {100 * count / n:5.1f}%  {shown[:140]}")
