#!/bin/bash
# Ctrl-C, after psql: the first SIGINT to `job run`
# finishes the step running, stops, prints the summary ("interrupted") and
# exits 130, and the summary's step is the job's step_no in the database;
# a second SIGINT cancels the step running (it rolls back); Ctrl-C cancels
# `install`, whose one transaction leaves nothing behind. Every wait is on
# an observed state (a backend waiting on a failpoint's lock, a process
# stopped at a failpoint, a message printed), never on time.
. "$(dirname "$0")/lib_foundation.sh"

. "$(dirname "$0")/lib_interrupt.sh"

CURRENT="job run: Ctrl-C after step 1 committed (runner stopped at after_commit)"
new_job cleanup_lab_t_cli_intr1
CLEANUP_FAILPOINTS=after_commit "$CLEANUPCTL" --db "$DB" job run "$J" --synchronous-commit on \
	>"$TMPD/out" 2>"$TMPD/err" </dev/null &
PID=$!
wait_for "the runner to stop after step 1" stopped "$PID"
same "$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")" "1" "step 1 committed before the Ctrl-C"
kill -INT "$PID"
kill -CONT "$PID"
collect "$PID"
expect 130 "interrupted" "job $J: 1 step in" "step 1,"
DBSTEP=$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")
same "$DBSTEP" "1" "the job stopped after the step running"
grep -q "step $DBSTEP, " <<<"$OUT" || fail "summary does not say step $DBSTEP"

CURRENT="job run: Ctrl-C during step 1 finishes it, then stops"
new_job cleanup_lab_t_cli_intr2
run_held "step 1" job run "$J"
kill -INT "$PID"
wait_for "the first Ctrl-C noted" said "$TMPD/err" "finishing the current step"
hold_end
collect "$PID"
expect 130 "interrupted" "job $J: 1 step in"
same "$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")" "1" "the step running finished and nothing after it"
grep -q "step 1, " <<<"$OUT" || fail "summary does not say step 1"

CURRENT="job run: a second Ctrl-C cancels the step running"
new_job cleanup_lab_t_cli_intr3
run_held "step 1" --json job run "$J"
kill -INT "$PID"
wait_for "the first Ctrl-C noted" said "$TMPD/err" "finishing the current step"
kill -INT "$PID"
collect "$PID"
hold_end
expect 130 "cancel request sent" "is at step 0 as the database has it" "resumes from step 1"
same "$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")" "0" "the cancelled step rolled back"
same "$(jq -c '[.interrupted, .verified, .job.step_no, .error.exit_code]' <<<"$OUT")" "[true,true,0,130]" \
	"run --json after a cancel"

CURRENT="install: Ctrl-C cancels it and nothing changes"
psql -X -q "$ADMIN" -c "DROP DATABASE IF EXISTS cleanup_lab_t_cli_intr4 WITH (FORCE)" \
	-c "CREATE DATABASE cleanup_lab_t_cli_intr4" 2>/dev/null
KEY=$(sql "SELECT cleanup.failpoint_key('install')") # from the installed $DB: an immutable number
DB="host=$SOCK port=$PORT dbname=cleanup_lab_t_cli_intr4 user=postgres"
hold_start "$KEY"
PGOPTIONS='-c cleanup.failpoints=install' "$CLEANUPCTL" --db "$DB" install >"$TMPD/out" 2>"$TMPD/err" </dev/null 7>&- &
PID=$!
wait_for "install at its failpoint" lock_waited "$KEY"
kill -INT "$PID"
collect "$PID"
hold_end
expect 130 "interrupted: install cancelled by Ctrl-C" "cancel request sent"
same "$(sql "SELECT count(*) FROM pg_namespace WHERE nspname IN ('cleanup', 'inventory')")" "0" \
	"schemas after a cancelled install"
run install
expect 0 "installed schema version"

finish
