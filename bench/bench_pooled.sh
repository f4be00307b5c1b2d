#!/usr/bin/env bash
# What keeping no session state costs (F1; docs/fleet.md, "Cost"):
# the same work on a direct connection (named prepared statements, session
# settings, pipelined steps and appends) and on the pooled path (unnamed
# statements after per-transaction settings, one transaction at a time, the
# runner lease renewed by each step as on a direct connection), which CLEANUP_ASSUME_POOLED=1
# selects on a direct connection, so that only the client's path differs.
#
#   bash bench/bench_pooled.sh BUILD_DIR [ITEMS] [ROUNDS]
#
# Uses a sandbox of its own in BUILD_DIR/bench-pooled-sandbox (started and
# stopped here). Prints one line per measurement: the median of ROUNDS.
set -euo pipefail
BUILD=${1:?usage: bench_pooled.sh BUILD_DIR [ITEMS] [ROUNDS]}
ITEMS=${2:-20000}
ROUNDS=${3:-3}
BIN=$BUILD/tui/cleanupctl
DIR=$BUILD/bench-pooled-sandbox
. "$(dirname "$0")/lib_sandbox.sh"
ADMIN=$(conninfo postgres)
DB=$(conninfo cleanup_lab_bench_pooled)

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
now_ms() { date +%s%3N; }

fresh() {
	psql -X -q "$ADMIN" -c "DROP DATABASE IF EXISTS cleanup_lab_bench_pooled WITH (FORCE)" \
		-c "CREATE DATABASE cleanup_lab_bench_pooled" >/dev/null
	"$BIN" --quiet --db "$DB" install >/dev/null
	"$BIN" --quiet --db "$DB" seed --servers 1 --libraries 1 --items "$ITEMS" >/dev/null
}

# run_once MODE: a prune of library 1 seeing half its IDs: append (stdin),
# seal, run; prints "append_ms run_ms steps".
run_once() {
	local env=() job t0 t1 t2 steps
	[ "$1" = pooled ] && env=(env CLEANUP_ASSUME_POOLED=1)
	fresh
	job=$("${env[@]}" "$BIN" --db "$DB" --json job create prune --library 1 | jq .id)
	seq 1 2 "$ITEMS" | sed 's/^/ext-1-/' >"$BUILD/bench-pooled-ids"
	t0=$(now_ms)
	"${env[@]}" "$BIN" --quiet --db "$DB" job append "$job" <"$BUILD/bench-pooled-ids" >/dev/null
	t1=$(now_ms)
	"${env[@]}" "$BIN" --quiet --db "$DB" job seal "$job" --expected $(((ITEMS + 1) / 2)) >/dev/null
	t2=$(now_ms)
	"${env[@]}" "$BIN" --quiet --db "$DB" job run "$job" >/dev/null
	steps=$(psql -X -q -t -A "$DB" -c "SELECT step_no FROM cleanup.jobs WHERE id = $job")
	echo "$((t1 - t0)) $(($(now_ms) - t2)) $steps"
}

# show_loop MODE N: N `job show` commands (connect, probe, one query each).
show_loop() {
	local env=() t0 i
	[ "$1" = pooled ] && env=(env CLEANUP_ASSUME_POOLED=1)
	t0=$(now_ms)
	for i in $(seq 1 "$2"); do "${env[@]}" "$BIN" --db "$DB" job show 1 >/dev/null; done
	echo $(($(now_ms) - t0))
}

echo "items $ITEMS, rounds $ROUNDS, $(nproc) cores, PostgreSQL $(psql -X -q -t -A "$ADMIN" -c 'SHOW server_version')"
for mode in direct pooled; do
	: >"$BUILD/bench-pooled-$mode"
	for r in $(seq 1 "$ROUNDS"); do run_once $mode >>"$BUILD/bench-pooled-$mode"; done
	a=$(cut -d' ' -f1 "$BUILD/bench-pooled-$mode" | median)
	s=$(cut -d' ' -f2 "$BUILD/bench-pooled-$mode" | median)
	n=$(cut -d' ' -f3 "$BUILD/bench-pooled-$mode" | median)
	sh=$(for r in $(seq 1 "$ROUNDS"); do show_loop $mode 50; done | median)
	printf '%-7s append %6d IDs %6d ms   run %5d steps %6d ms (%.2f ms/step)   50 x job show %5d ms\n' \
		$mode $(((ITEMS + 1) / 2)) "$a" "$n" "$s" "$(echo "$s / $n" | bc -l)" "$sh"
done
rm -f "$BUILD"/bench-pooled-*[a-z] 2>/dev/null || true
