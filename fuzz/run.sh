#!/usr/bin/env bash
# Runs every fuzz target for make fuzz and fails on any property failure or
# sanitizer report.
#
#   fuzz/run.sh BUILD_DIR [RUNS] [JOBS]
#
# BUILD_DIR is the build configured with ENABLE_FUZZ=ON (make fuzz: build-fuzz).
# Each target runs RUNS executions (default 1,000,000; FUZZ_RUNS) over its
# corpus in fuzz/corpus/TARGET with its dictionary fuzz/dict/TARGET.dict,
# JOBS targets at a time (default 2). libFuzzer's build
# (fuzz_TARGET_libfuzzer) is used when it was built, else the built-in
# driver's (fuzz_TARGET). The seed is FUZZ_SEED (default 1: a run repeats
# exactly; FUZZ_SEED=0 picks one from the clock, printed in the log).
# New inputs libFuzzer finds go to BUILD_DIR/fuzz/work/TARGET, never into
# the tree; crash files go to BUILD_DIR/fuzz/artifacts/. Logs:
# BUILD_DIR/fuzz/logs/TARGET.log; the summary: BUILD_DIR/fuzz/summary.txt.
set -u
build=${1:?usage: fuzz/run.sh BUILD_DIR [RUNS] [JOBS]}
runs=${2:-${FUZZ_RUNS:-1000000}}
jobs=${3:-2}
seed=${FUZZ_SEED:-1}
src=$(cd "$(dirname "$0")" && pwd)
out=$(cd "$build" && pwd)/fuzz
targets="${FUZZ_TARGETS:-external_id theme cmdline lineedit}"

# Longest input per target: past the limits each one guards (256-byte IDs,
# 255-byte theme lines, 1023-byte command lines through repeated text)
# while keeping a million runs within a minute or two.
max_len() {
	case $1 in
	external_id) echo 600 ;;
	theme) echo 2048 ;;
	cmdline) echo 320 ;;
	lineedit) echo 256 ;;
	*) echo 1024 ;;
	esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$out/logs" "$out/artifacts"

run_target() {
	local t=$1 bin engine start end rc log=$out/logs/$1.log
	if [ -x "$out/fuzz_${t}_libfuzzer" ]; then
		bin=$out/fuzz_${t}_libfuzzer
		engine=libFuzzer
		mkdir -p "$out/work/$t"
		set -- "$bin" -runs="$runs" -seed="$seed" -max_len="$(max_len "$t")" -dict="$src/dict/$t.dict" \
			-artifact_prefix="$out/artifacts/" -print_final_stats=1 -timeout=60 "$out/work/$t" "$src/corpus/$t"
	else
		bin=$out/fuzz_$t
		engine=driver
		[ "$seed" = 0 ] && seed=""
		set -- "$bin" -runs="$runs" ${seed:+-seed="$seed"} -max_len="$(max_len "$t")" \
			-dict="$src/dict/$t.dict" -artifact_prefix="$out/artifacts/" "$src/corpus/$t"
	fi
	if [ ! -x "$bin" ]; then
		echo "$t: $bin is not built" >"$log"
		echo "$t FAIL not-built"
		return
	fi
	echo "== $t ($engine): $*" >"$log"
	start=$(date +%s.%N)
	"$@" >>"$log" 2>&1
	rc=$?
	end=$(date +%s.%N)
	# Executions: libFuzzer's final statistics, or the driver's last line.
	local execs
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p; s/^fuzz_[a-z_]*: done: \([0-9]*\) executions.*/\1/p' "$log" | tail -1)
	[ -z "$execs" ] && execs=0
	local secs rate status=ok
	secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
	rate=$(awk -v n="$execs" -v s="$secs" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')
	if [ $rc -ne 0 ] || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|property failed|deadly signal' "$log"; then
		status=FAIL
	elif [ "$execs" -lt "$runs" ]; then
		status=FAIL-short
	fi
	echo "$t $status $engine $execs $secs $rate"
}

echo "fuzz: $runs runs per target, seed ${seed}, $jobs at a time; logs in $out/logs/" >&2
results=$out/results.txt
: >"$results"
running=0
for t in $targets; do
	run_target "$t" >>"$results" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

fail=0
{
	printf '%-12s %-8s %-10s %12s %9s %10s\n' target result engine executions seconds exec/s
	for t in $targets; do
		line=$(grep "^$t " "$results" || echo "$t FAIL missing 0 0 0")
		# shellcheck disable=SC2086
		set -- $line
		printf '%-12s %-8s %-10s %12s %9s %10s\n' "$1" "$2" "$3" "${4:-0}" "${5:-0}" "${6:-0}"
		[ "$2" = ok ] || fail=1
	done
	known=$(grep -ho '^known bug [a-z0-9-]*' "$out"/logs/*.log 2>/dev/null | sort -u | sed 's/^known bug //' | tr '\n' ' ')
	[ -n "$known" ] && echo "known bugs seen (reported, not failed; see fuzz/README.md): $known"
} | tee "$out/summary.txt"
if [ $fail -ne 0 ]; then
	echo "fuzz: FAILED; see $out/logs/ and the crash files in $out/artifacts/" >&2
	for t in $targets; do
		grep -E -m3 -A2 'property failed|ERROR: |runtime error:|saved as|Test unit written' "$out/logs/$t.log" >&2
	done
	exit 1
fi
echo "fuzz: every target passed" >&2
