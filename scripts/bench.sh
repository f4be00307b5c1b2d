#!/bin/sh
# make bench: runs the benchmark programs (BUILD/bench/bench_*) against a
# sandbox of their own (BUILD/bench-sandbox), prints their figures and stops
# the sandbox, also when a program fails. Not part of make test.
#
#   sh scripts/bench.sh [BUILD]
#   make bench BENCH_ARGS="--rounds 3"                  options of bench_cleanup
#   make bench BENCH_PROGRAMS=bench_cleanup             run only these programs
#   BENCH_ARGS_bench_console_refresh="--items2 2000000" make bench
#   make bench BENCH_QUICK=1                            smaller sizes, one round (bench_shapes
#                                                       gets --quick; bench_workers and bench_rss
#                                                       read BENCH_QUICK from the environment)
#
# Every bench/*.c is a program of the run (bench/CMakeLists.txt builds each
# one), in name order: bench_workers (1/2/4 runners of cleanupctl worker,
# docs/benchmarks-workers.md) and bench_rss (client memory of job run and
# the console at 1M and 10M items) included. Each program's command line is
# printed with the load average before it starts.
#
# Each program gets --db CONNINFO, then the words of $BENCH_ARGS_<program>
# ($BENCH_ARGS for bench_cleanup). docs/benchmarks.md records the figures
# and what they mean.
#
# At the end the run prints its summary: every "summary: " line the programs
# printed (the headline figure of each, with its target where there is one),
# side by side, and which programs failed.
set -eu
build=${1:-build}
ctl="$build/tui/cleanupctl"
dir="$(cd "$build" && pwd)/bench-sandbox"

if [ ! -x "$ctl" ]; then
	echo "bench.sh: build first: cmake --build $build --target cleanupctl bench" >&2
	exit 1
fi
programs=${BENCH_PROGRAMS:-$(cd "$build/bench" 2>/dev/null && ls bench_* 2>/dev/null | sort)}
if [ -z "$programs" ]; then
	echo "bench.sh: no benchmark programs in $build/bench: cmake --build $build --target bench" >&2
	exit 1
fi
for p in $programs; do
	if [ ! -x "$build/bench/$p" ]; then
		echo "bench.sh: $build/bench/$p is not built: cmake --build $build --target bench" >&2
		exit 1
	fi
done

outdir=$(mktemp -d "${TMPDIR:-/tmp}/cleanupctl-bench.XXXXXX")
stop() {
	"$ctl" --quiet sandbox stop --dir "$dir" >/dev/null 2>&1 || true
	rm -rf "$outdir"
}
trap stop EXIT INT TERM

conninfo=$("$ctl" --quiet sandbox start --dir "$dir")
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo) RAM, $(uname -sr)"
# The commit the figures belong to (docs/benchmarks.md records it beside each table).
commit=$(git -C "$(dirname "$0")" describe --always --dirty 2>/dev/null || echo unknown)
echo "commit: $commit"
status=0
for p in $programs; do
	if [ "$p" = bench_cleanup ]; then
		args=${BENCH_ARGS_bench_cleanup:-${BENCH_ARGS:-}}
	else
		case $p in
		*[!A-Za-z0-9_]*) args= ;;
		*) args=$(eval "echo \"\${BENCH_ARGS_$p:-}\"") ;;
		esac
	fi
	echo
	echo "command: $build/bench/$p --db \"$conninfo\" $args"
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	# Each program's output is kept to gather its "summary: " lines at
	# the end (POSIX sh has no pipefail: the exit status goes by file).
	# shellcheck disable=SC2086
	{ "$build/bench/$p" --db "$conninfo" $args; echo $? >"$outdir/$p.rc"; } | tee "$outdir/$p.out"
	rc=$(cat "$outdir/$p.rc" 2>/dev/null || echo 1)
	[ "$rc" = 0 ] || status=$rc
done
# The headline figures of every program side by side (shapes and
# prune ratios, manifest against COPY, 1/2/4 runners, client memory): each
# program prints its own as "summary: " lines; the detail is above.
echo
echo "summary of this run (commit $commit, $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end):"
found=0
for p in $programs; do
	if grep -q '^summary: ' "$outdir/$p.out" 2>/dev/null; then
		sed -n 's/^summary: /  /p' "$outdir/$p.out"
		found=1
	fi
	rc=$(cat "$outdir/$p.rc" 2>/dev/null || echo 1)
	[ "$rc" = 0 ] || echo "  $p: FAILED (exit $rc): its figures are missing"
done
[ "$found" = 1 ] || echo "  (no program of this run prints a summary line)"
exit "$status"
