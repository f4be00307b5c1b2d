# Helpers of the tests that stop a command at a failpoint and signal it
# (test_cli_interrupt.sh, test_cli_interrupt_step.sh, test_worker.sh),
# sourced after lib_foundation.sh: waits on observed states (a lock granted
# or waited on, a process stopped, a message printed), a session that holds
# an advisory lock (a failpoint's) until told, and the prune the Ctrl-C
# tests interrupt.

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
	session_start "$DB" "SELECT pg_advisory_lock($1);"
	wait_for "the lock holder" lock_granted "$1"
}
lock_granted() { [ "$(sql "SELECT count(*) FROM pg_locks WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND locktype = 'advisory' AND granted AND objid = ($1 & 4294967295)::oid")" -ge 1 ]; }
lock_waited() { [ "$(sql "SELECT count(*) FROM pg_locks WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND locktype = 'advisory' AND NOT granted AND objid = ($1 & 4294967295)::oid")" -ge 1 ]; }
hold_end() {
	echo '\q' >&7
	exec 7>&-
	wait "$HOLDER" 2>/dev/null
}
# run_held WHAT ARGS...: holds the step_before_commit failpoint's lock
# (KEY), starts `cleanupctl --db $DB ARGS` in the background with that
# failpoint on (PID; output in $TMPD/out and $TMPD/err), and waits until
# WHAT (its step) waits on the lock.
run_held() {
	local what=$1
	shift
	KEY=$(sql "SELECT cleanup.failpoint_key('step_before_commit')")
	hold_start "$KEY"
	PGOPTIONS='-c cleanup.failpoints=step_before_commit' "$CLEANUPCTL" --db "$DB" "$@" \
		>"$TMPD/out" 2>"$TMPD/err" </dev/null 7>&- &
	PID=$!
	wait_for "$what at its failpoint" lock_waited "$KEY"
}
stopped() { [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = "T" ]; }
said() { grep -q "$2" "$1" 2>/dev/null; }

# A prune with one seen item: 2,000 eligible, about 16 steps of 128.
new_job() {
	db_fresh "$1"
	sql "SELECT cleanup_lab.seed_demo(1, 1, 2000)" >/dev/null
	J=$(sql "SELECT id FROM cleanup.job_create('prune', 1)")
	sql "SELECT cleanup.job_append($J, ARRAY['ext-1-1'])" >/dev/null
	sql "SELECT cleanup.job_seal($J, 1)" >/dev/null
}

