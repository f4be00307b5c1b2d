#!/bin/sh
# A step's statements and time, counted (docs/benchmarks.md, "Removals and
# step cost"): remove-library drain steps of 128 items on a library with
# dependents, each step's statements counted by auto_explain (nested
# statements: every statement a step's functions run, PostgreSQL's own
# foreign-key checks included), and the mean step time of a run of steps.
#
#   sh bench/step_statements.sh [BUILD] [ITEMS (20000)] [STEPS (40)] [BASE_SQL_DIR]
#
# Uses a sandbox of its own in BUILD/bench-steps-sandbox (started and
# stopped here). With BASE_SQL_DIR (an sql/ tree of another commit, e.g.
# git archive BASE sql | tar -x -C /tmp/base), a second database gets that
# tree's sql/functions/055_dependents.sql, 060_step.sql and 062_runner.sql over this
# build's install (then its 098_privileges.sql, and its contract recorded
# again), and the two are measured
# in turns (base, new, new, base): compare the figures of one run.
set -eu
BUILD=${1:-build}
ITEMS=${2:-20000}
STEPS=${3:-40}
BASE=${4:-}
BIN=$BUILD/tui/cleanupctl
DIR=$(cd "$BUILD" && pwd)/bench-steps-sandbox
. "$(dirname "$0")/lib_sandbox.sh"

# Builds database $1: installed, seeded (1 server, 2 libraries of ITEMS
# items, about 3 dependents an item), a bounded remove-library job of the
# first library created; with $2, the base functions over it.
build_db() {
	new_db "$1"
	"$BIN" --quiet --db "$(conninfo "$1")" seed --servers 1 --libraries 2 --items "$ITEMS" \
		--dependents 3 >/dev/null
	if [ -n "${2:-}" ]; then
		# 098_privileges.sql again: CREATE OR REPLACE drops the
		# search_path every engine function has pinned (a SET clause,
		# paid at each call), which would flatter the base.
		$PSQL -d "$1" -f "$2/functions/055_dependents.sql" -f "$2/functions/060_step.sql" \
			-f "$2/functions/062_runner.sql" -f "$2/functions/098_privileges.sql" >/dev/null
		$PSQL -d "$1" -c "SELECT cleanup.contract_record()" >/dev/null
	fi
	$PSQL -d "$1" -c "VACUUM ANALYZE" -c "CHECKPOINT"
	"$BIN" --quiet --db "$(conninfo "$1")" job create remove-library --library \
		"$($PSQL -d "$1" -Atc "SELECT min(id) FROM inventory.libraries")" --mode bounded >/dev/null
	$PSQL -d "$1" -Atc "SELECT max(id) FROM cleanup.jobs" >"$DIR/job-$1"
}

# The psql lines running steps $2 to $3 of job $1, one transaction each.
steps() {
	for s in $(seq "$2" "$3"); do
		echo "SELECT cleanup.job_step($1, $s) \\g /dev/null"
	done
}

# Runs STEPS drain steps of database $1's job (after 3 unmeasured steps:
# the backend's first plans), then STEPS more with every statement
# reported by auto_explain; prints the statements a step and the mean
# step time (cleanup.job_steps.duration_ms) of the unreported steps.
measure() {
	job=$(cat "$DIR/job-$1")
	out=$($PSQL -d "$1" -At 2>&1 <<EOF
$(steps "$job" 1 3)
SELECT pg_backend_pid() AS pid \\gset
\\setenv BACKEND_PID :pid
\\! awk '{print "cpu0", \$14 + \$15}' /proc/\$BACKEND_PID/stat
$(steps "$job" 4 $((3 + STEPS)))
\\! awk '{print "cpu1", \$14 + \$15}' /proc/\$BACKEND_PID/stat
SELECT 'ms ' || round(avg(duration_ms)::numeric, 3) || ' p50 '
       || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms)::numeric, 3)
       || ' deleted ' || sum(deleted)
  FROM cleanup.job_steps WHERE job_id = $job AND step_no BETWEEN 4 AND 3 + $STEPS AND action = 'drain';
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_nested_statements = on;
SET auto_explain.log_level = notice;
SET client_min_messages = notice;
$(steps "$job" $((4 + STEPS)) $((3 + 2 * STEPS)))
EOF
)
	n=$(printf '%s\n' "$out" | grep -c 'Query Text:' || true)
	# The outer statements (one a step) are among them.
	c0=$(printf '%s\n' "$out" | sed -n 's/^cpu0 //p')
	c1=$(printf '%s\n' "$out" | sed -n 's/^cpu1 //p')
	printf '%s: %s; backend CPU %s ms a step; statements a step %s\n' "$1" \
		"$(printf '%s\n' "$out" | grep '^ms ')" \
		"$(echo "scale=2; ($c1 - $c0) * 1000 / $(getconf CLK_TCK) / $STEPS" | bc)" \
		"$(echo "scale=1; $n / $STEPS - 1" | bc)"
	printf '%s\n' "$out" | grep 'Query Text:' | sed 's/.*Query Text: *//' | cut -c1-60 | sort | uniq -c \
		| sort -rn >"$DIR/statements-$1.txt"
}

# Instructions a step (COUNT=1): the server stopped, a single-user backend
# of database $1 under callgrind runs steps 1 to $2 of its job (one
# statement, one transaction each); prints the instructions counted (the
# backend's start and end included: count_all subtracts them).
count_ir() {
	job=$(cat "$DIR/job-$1")
	out=$(mktemp -d /tmp/step-ir.XXXXXX)
	chmod 777 "$out"
	steps "$job" 1 "$2" | sed 's/ \\g \/dev\/null//' \
		| runuser -u postgres -- valgrind --tool=callgrind \
			--callgrind-out-file="$out/cg" "$(pg_config --bindir)/postgres" --single -D "$DIR/data" \
			-c jit=off "$1" >/dev/null 2>&1
	sed -n 's/^summary: //p' "$out/cg"
	rm -rf "$out"
}

# COUNT=1: each database copied twice (a and b), the server stopped, steps
# 1..3+STEPS run in copy a and 1..3+2*STEPS in copy b: the difference over
# STEPS is the instructions of one warm step.
count_all() {
	for db in "$@"; do
		$PSQL -d postgres -c "DROP DATABASE IF EXISTS ${db}_a" -c "CREATE DATABASE ${db}_a TEMPLATE $db" \
			-c "DROP DATABASE IF EXISTS ${db}_b" -c "CREATE DATABASE ${db}_b TEMPLATE $db"
		cp "$DIR/job-$db" "$DIR/job-${db}_a"
		cp "$DIR/job-$db" "$DIR/job-${db}_b"
	done
	"$BIN" --quiet sandbox stop --dir "$DIR" >/dev/null
	for db in "$@"; do
		a=$(count_ir "${db}_a" $((3 + STEPS)))
		b=$(count_ir "${db}_b" $((3 + 2 * STEPS)))
		echo "$db: $(( (b - a) / STEPS )) instructions a step (callgrind, $a and $b)"
	done
}

build_db cleanup_lab_steps_new
if [ "${COUNT:-0}" = 1 ]; then
	if [ -n "$BASE" ]; then
		build_db cleanup_lab_steps_base "$BASE"
		count_all cleanup_lab_steps_base cleanup_lab_steps_new
	else
		count_all cleanup_lab_steps_new
	fi
elif [ -n "$BASE" ]; then
	build_db cleanup_lab_steps_base "$BASE"
	measure cleanup_lab_steps_base
	measure cleanup_lab_steps_new
	build_db cleanup_lab_steps_base "$BASE"
	build_db cleanup_lab_steps_new
	measure cleanup_lab_steps_new
	measure cleanup_lab_steps_base
else
	measure cleanup_lab_steps_new
fi
echo "statements by text: $DIR/statements-*.txt"
