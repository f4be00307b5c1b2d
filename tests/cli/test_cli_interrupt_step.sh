#!/bin/bash
# Ctrl-C in `job step --steps N`, as in `job run` (issue 9, defect 6): the
# first SIGINT lets the step running commit, stops before the next, says
# what was done (steps of this command, the job's step as the database has
# it) and exits 130; a second SIGINT cancels the step running (it rolls
# back), exit 130. Every wait is on an observed state (a backend waiting
# on the step_before_commit failpoint's lock, a message printed), never on
# time. Before the fix the first SIGINT killed the process mid-step.
. "$(dirname "$0")/lib_foundation.sh"

# wait_for DESCRIPTION COMMAND...: polls COMMAND until it succeeds (60 s).
wait_for() {
	local what=$1 n=0
	shift
	until "$@"; do
		n=$((n + 1))
		[ "$n" -lt 3000 ] || { echo "FAIL: timed out waiting for $what"; FAILS=$((FAILS + 1)); return 1; }
		sleep 0.02
	done
}

# hold_start KEY: a session of its own holds advisory lock KEY in $DB.
hold_start() {
	rm -f "$TMPD/hold"
	mkfifo "$TMPD/hold"
	psql -X -q "$DB" <"$TMPD/hold" >/dev/null 2>&1 &
	HOLDER=$!
	exec 7>"$TMPD/hold"
	echo "SELECT pg_advisory_lock($1);" >&7
	wait_for "the lock holder" lock_granted "$1"
}
lock_granted() { [ "$(sql "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objid = ($1 & 4294967295)::oid")" -ge 1 ]; }
lock_waited() { [ "$(sql "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = ($1 & 4294967295)::oid")" -ge 1 ]; }
hold_end() {
	echo '\q' >&7
	exec 7>&-
	wait "$HOLDER" 2>/dev/null
}
said() { grep -q "$2" "$1" 2>/dev/null; }

# A prune with one seen item: 2,000 eligible, about 16 steps of 128.
new_job() {
	db_fresh "$1"
	sql "SELECT cleanup.seed_demo(1, 1, 2000)" >/dev/null
	J=$(sql "SELECT id FROM cleanup.job_create('prune', 1)")
	sql "SELECT cleanup.job_append($J, ARRAY['ext-1-1'])" >/dev/null
	sql "SELECT cleanup.job_seal($J, 1)" >/dev/null
}

collect() {
	wait "$1"
	RC=$?
	OUT=$(cat "$TMPD/out")
	ERR=$(cat "$TMPD/err")
}

CURRENT="job step --steps 5: Ctrl-C during step 1 finishes it, then stops"
new_job cleanup_lab_t_cli_intr_step1
KEY=$(sql "SELECT cleanup.failpoint_key('step_before_commit')")
hold_start "$KEY"
PGOPTIONS='-c cleanup.failpoints=step_before_commit' "$CLEANUPCTL" --db "$DB" job step "$J" --steps 5 \
	>"$TMPD/out" 2>"$TMPD/err" </dev/null 7>&- &
PID=$!
wait_for "step 1 at its failpoint" lock_waited "$KEY"
kill -INT "$PID"
wait_for "the first Ctrl-C noted" said "$TMPD/err" "finishing the current step"
hold_end
collect "$PID"
expect 130 "step 1: " "interrupted by Ctrl-C after 1 step of this command; the job is at step 1"
same "$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")" "1" "the step running committed and nothing after it"
grep -q "^step 2" <<<"$OUT" && fail "a step ran after the Ctrl-C ($CURRENT)"

CURRENT="job step --steps 5 --json: Ctrl-C after step 1, one document"
KEY=$(sql "SELECT cleanup.failpoint_key('step_before_commit')")
hold_start "$KEY"
PGOPTIONS='-c cleanup.failpoints=step_before_commit' "$CLEANUPCTL" --db "$DB" --json job step "$J" --steps 5 \
	>"$TMPD/out" 2>"$TMPD/err" </dev/null 7>&- &
PID=$!
wait_for "step 2 at its failpoint" lock_waited "$KEY"
kill -INT "$PID"
wait_for "the first Ctrl-C noted" said "$TMPD/err" "finishing the current step"
hold_end
collect "$PID"
expect 130
same "$(jq -c '[.interrupted, (.steps | length), .job.step_no]' <<<"$OUT")" "[true,1,2]" "step --json after a Ctrl-C"
same "$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")" "2" "one more step, then stopped"

CURRENT="job step --steps 5: a second Ctrl-C cancels the step running"
KEY=$(sql "SELECT cleanup.failpoint_key('step_before_commit')")
hold_start "$KEY"
PGOPTIONS='-c cleanup.failpoints=step_before_commit' "$CLEANUPCTL" --db "$DB" job step "$J" --steps 5 \
	>"$TMPD/out" 2>"$TMPD/err" </dev/null 7>&- &
PID=$!
wait_for "step 3 at its failpoint" lock_waited "$KEY"
kill -INT "$PID"
wait_for "the first Ctrl-C noted" said "$TMPD/err" "finishing the current step"
kill -INT "$PID"
collect "$PID"
hold_end
expect 130 "cancel request sent" "interrupted: the step running cancelled by Ctrl-C" \
	"after 0 steps of this command; the job is at step 2"
same "$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")" "2" "the cancelled step rolled back"

CURRENT="job step --steps 2 without a Ctrl-C: exit 0, not interrupted"
run --json job step "$J" --steps 2
expect 0
same "$(jq -c '[.interrupted, (.steps | length), .job.step_no]' <<<"$OUT")" "[false,2,4]" "step --json, no Ctrl-C"

finish
