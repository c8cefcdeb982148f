#!/usr/bin/env bash
# Runs a command while every CPU has a SCHED_IDLE busy loop, so that no vCPU
# ever halts: a wake-up then preempts a running vCPU instead of starting a
# halted one through the hypervisor. It is what the guest's haltpoll driver
# would do with its default `guest_halt_poll_ns` (200 µs); this machine has
# it at 0 (docs/PERFORMANCE.md, "Session 13" and "Session 16"). A SCHED_IDLE
# task runs only when nothing else wants the CPU, so the services,
# PostgreSQL, wrk and pgbench keep all the time they would have had. It is a
# what-if for the benches (both sides of a comparison run under it), never
# something the product does.
#
# Usage: bench/wakeup/with-idle-spin.sh COMMAND [ARGS...]
# The loops are this script's own children, ended by PID when the command
# ends (and by `timeout` after an hour at the latest).
set -euo pipefail
(($# >= 1)) || { echo "usage: bench/wakeup/with-idle-spin.sh COMMAND [ARGS...]" >&2; exit 2; }
command -v chrt >/dev/null && command -v taskset >/dev/null || { echo "needs chrt and taskset (util-linux)" >&2; exit 2; }
spinners=()
stop_spinners() {
  for pid in "${spinners[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${spinners[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_spinners EXIT
for cpu in $(seq 0 $(($(getconf _NPROCESSORS_ONLN) - 1))); do
  taskset -c "$cpu" chrt --idle 0 timeout 3600 bash -c 'while :; do :; done' &
  spinners+=("$!")
done
echo "idle spinners (SCHED_IDLE, one per CPU): ${spinners[*]}" >&2
"$@"
