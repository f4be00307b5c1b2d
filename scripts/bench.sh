#!/bin/sh
# make bench: runs the benchmark programs against a sandbox of their own
# (BUILD/bench-sandbox), prints their figures and stops the sandbox, also
# when a program fails. Not part of make test.
#
#   sh scripts/bench.sh [BUILD] [bench_cleanup options...]
#   BENCH_ARGS="--rounds 3" make bench
#
# docs/benchmarks.md records the figures and what they mean.
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
ctl="$build/tui/cleanupctl"
dir="$(cd "$build" && pwd)/bench-sandbox"

if [ ! -x "$ctl" ] || [ ! -x "$build/bench/bench_cleanup" ]; then
	echo "bench.sh: build first: cmake --build $build --target cleanupctl bench" >&2
	exit 1
fi

stop() {
	"$ctl" --quiet sandbox stop --dir "$dir" >/dev/null 2>&1 || true
}
trap stop EXIT INT TERM

conninfo=$("$ctl" --quiet sandbox start --dir "$dir")
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo) RAM, $(uname -sr)"
echo "command: $build/bench/bench_cleanup --db \"$conninfo\" ${BENCH_ARGS:-} $*"
echo
# shellcheck disable=SC2086
"$build/bench/bench_cleanup" --db "$conninfo" ${BENCH_ARGS:-} "$@"
