#!/usr/bin/env bash
# Table CHECK constraints against domain constraints (payments migration 7,
# points migration 6), measured on the statements of a purchase with
# pgbench: one client, prepared statements, synchronous_commit=off (so the
# WAL flush does not hide the CPU), ABAB rounds on two pairs of databases:
#   before: migrated by binaries built before those migrations (BEFORE_BIN)
#   after:  migrated by this checkout's PaymentsService and PointsService
# Statements (files next to this script):
#   (a) insert.sql  saga step 1: a full apple_iap_transactions row
#   (b) update.sql  saga step 3: the state update of a prefilled row
#   (c) grant.sql   PointsService's grant statement, a new user per run
# Each run starts after a CHECKPOINT, after a 3 s warm-up of every
# statement on both sides; the payments databases hold PREFILL rows (the
# update's targets); autovacuum is off on the bench tables (the
# same on both sides). Prints per run the tps and PostgreSQL's CPU per
# statement (every server process's user+system time over the run, the
# exited ones through the postmaster's children's time: steadier than tps
# on a shared machine), then per statement the median of each side and
# after/before. Databases domains_{before,after}_* are recreated per
# invocation. About ROUNDS x 2 x 3 x SECONDS.
#
# Usage: bench/domains/run.sh BEFORE_BIN
#   BEFORE_BIN: a folder holding PaymentsService and PointsService built
#   from a commit before the migrations, e.g.
#     git worktree add /tmp/base b4dec49 && (cd /tmp/base && swift build \
#       --product PaymentsService && swift build --product PointsService)
#     bench/domains/run.sh /tmp/base/.build/debug
# Knobs: SECONDS_PER_RUN=15 ROUNDS=3 PREFILL=100000
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
# The project's Debian packages and PostgreSQL (quick when all are there).
"$root/scripts/install-deps.sh" >&2
here="$root/bench/domains"
before_bin="${1:?usage: bench/domains/run.sh BEFORE_BIN}"
seconds="${SECONDS_PER_RUN:-15}"
rounds="${ROUNDS:-3}"
prefill="${PREFILL:-100000}"
for product in PaymentsService PointsService; do
  [[ -x "$before_bin/$product" ]] || { echo "missing $before_bin/$product" >&2; exit 2; }
done
for tool in pgbench psql taskset; do
  command -v "$tool" >/dev/null || { echo "missing tool: $tool (scripts/install-deps.sh)" >&2; exit 2; }
done

echo "building PaymentsService and PointsService" >&2
(cd "$root" && timeout 1800 swift build --product PaymentsService >/dev/null 2>&1 && timeout 1800 swift build --product PointsService >/dev/null 2>&1) \
  || { echo "build failed (swift build --product PaymentsService)" >&2; exit 1; }
after_bin="$(cd "$root" && swift build --show-bin-path)"

eval "$(timeout 120 "$root/scripts/pg.sh" start)"
psql_admin=(env PGOPTIONS=-cclient_min_messages=warning psql -h 127.0.0.1 -p "$PG_PORT" -U iap -v ON_ERROR_STOP=1 -qAt)
url() { echo "postgresql://iap@127.0.0.1:$PG_PORT/$1"; }

for side in before after; do
  bin="$before_bin"; [[ $side == after ]] && bin="$after_bin"
  for service in payments points; do
    db="domains_${side}_$service"
    timeout 60 "${psql_admin[@]}" -d postgres -c "drop database if exists $db" -c "create database $db"
    product=PaymentsService; [[ $service == points ]] && product=PointsService
    DATABASE_URL="$(url "$db")" timeout 300 "$bin/$product" migrate >/dev/null 2>&1 \
      || { echo "$product migrate failed on $db" >&2; exit 1; }
  done
  timeout 900 "${psql_admin[@]}" -d "domains_${side}_payments" -v rows="$prefill" -f "$here/fill-payments.sql"
  timeout 60 "${psql_admin[@]}" -d "domains_${side}_payments" -c "alter table apple_iap_transactions set (autovacuum_enabled = false)"
  for table in user_points points_ledger credit_lots; do
    timeout 60 "${psql_admin[@]}" -d "domains_${side}_points" -c "alter table $table set (autovacuum_enabled = false)"
  done
  for service in payments points; do timeout 900 "${psql_admin[@]}" -d "domains_${side}_$service" -c "vacuum analyze"; done
  echo "$side: payments at version $("${psql_admin[@]}" -d "domains_${side}_payments" -c "select max(version) from schema_migrations"), points at $("${psql_admin[@]}" -d "domains_${side}_points" -c "select max(version) from schema_migrations"), table CHECKs: $("${psql_admin[@]}" -d "domains_${side}_payments" -c "select count(*) from pg_constraint where contype = 'c' and conrelid = 'apple_iap_transactions'::regclass") on apple_iap_transactions, $("${psql_admin[@]}" -d "domains_${side}_points" -c "select string_agg(t || ' ' || n, ', ') from (select conrelid::regclass::text as t, count(*) as n from pg_constraint where contype = 'c' and conrelid <> 0 group by 1 order by 1) c")" >&2
done

postmaster="$(head -1 "$root/.data/pg/postmaster.pid")"
ticks_per_second="$(getconf CLK_TCK)"
# server_ticks: CPU ticks of the whole server so far: the postmaster's
# reaped children (exited backends) plus every live server process.
server_ticks() {
  local total pid
  total=$(awk '{ print $16 + $17 }' "/proc/$postmaster/stat")
  for pid in $postmaster $(pgrep -P "$postmaster"); do
    total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}

# run STATEMENT SIDE [SECONDS]: one pgbench run; prints "tps cpu_us_per_statement".
run() {
  local statement="$1" side="$2" duration="${3:-$seconds}" db output ticks_before ticks_after count
  db="domains_${side}_payments"; [[ $statement == grant ]] && db="domains_${side}_points"
  timeout 60 "${psql_admin[@]}" -d "$db" -c "checkpoint"
  ticks_before=$(server_ticks)
  output=$(PGOPTIONS=-csynchronous_commit=off timeout $((duration + 60)) taskset -c 1 \
    pgbench -h 127.0.0.1 -p "$PG_PORT" -U iap -n -c 1 -j 1 -M prepared -T "$duration" -D rows="$prefill" \
      -f "$here/$statement.sql" "$db" 2>/dev/null)
  sleep 0.2   # the backend exits and is reaped
  ticks_after=$(server_ticks)
  count=$(awk '/^number of transactions actually processed:/ { print $NF }' <<<"$output")
  awk -v out="$output" -v n="$count" -v t=$((ticks_after - ticks_before)) -v hz="$ticks_per_second" 'BEGIN {
    if (match(out, /tps = [0-9.]+/) && n > 0) printf "%.0f %.0f\n", substr(out, RSTART + 6, RLENGTH - 6), t / hz * 1e6 / n }'
}

# median VALUES...: the middle value (the mean of the two middle ones for an even count).
median() {
  printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# A short unmeasured run of each statement on each side first: the tables
# a grant writes start empty, and a backend's first plans of them (the
# foreign key's check among them) would be those of empty tables.
for statement in insert update grant; do
  for side in before after; do
    run "$statement" "$side" 3 >/dev/null
  done
done

declare -A tps_runs cpu_runs
printf "%-8s %-6s %-7s %8s %14s\n" statement round side tps "PG CPU us/stmt"
for round in $(seq 1 "$rounds"); do
  for statement in insert update grant; do
    for side in before after; do
      read -r tps cpu <<<"$(run "$statement" "$side")"
      [[ -n "${cpu:-}" ]] || { echo "pgbench gave no result for $statement on $side" >&2; exit 1; }
      tps_runs[$statement.$side]+=" $tps"
      cpu_runs[$statement.$side]+=" $cpu"
      printf "%-8s %-6s %-7s %8s %14s\n" "$statement" "$round" "$side" "$tps" "$cpu"
    done
  done
done
echo
echo "medians of $rounds rounds:"
printf "%-8s %11s %11s %9s %15s %15s %9s\n" statement "before tps" "after tps" "tps ratio" "before CPU us" "after CPU us" "CPU ratio"
for statement in insert update grant; do
  # shellcheck disable=SC2086 # the runs are a space-separated list of numbers
  bt=$(median ${tps_runs[$statement.before]}); at=$(median ${tps_runs[$statement.after]})
  # shellcheck disable=SC2086
  bc=$(median ${cpu_runs[$statement.before]}); ac=$(median ${cpu_runs[$statement.after]})
  printf "%-8s %11s %11s %9s %15s %15s %9s\n" "$statement" "$bt" "$at" "$(awk -v a="$at" -v b="$bt" 'BEGIN { printf "%.3f", a / b }')" \
    "$bc" "$ac" "$(awk -v a="$ac" -v b="$bc" 'BEGIN { printf "%.3f", a / b }')"
done
