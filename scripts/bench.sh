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

stop() {
	"$ctl" --quiet sandbox stop --dir "$dir" >/dev/null 2>&1 || true
}
trap stop EXIT INT TERM

conninfo=$("$ctl" --quiet sandbox start --dir "$dir")
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo) RAM, $(uname -sr)"
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
	# shellcheck disable=SC2086
	"$build/bench/$p" --db "$conninfo" $args || status=$?
done
exit "$status"
