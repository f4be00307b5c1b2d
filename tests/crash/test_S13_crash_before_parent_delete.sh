#!/bin/bash
# S13 (with S11, S12): a crash between the drain and the parent delete
# leaves an empty parent that the next `job run` finalizes. The drain is
# stopped right after its last step (job step one at a time, job run
# --max-steps 1); the empty parent stays fenced and guarded; a run held
# busy at the parent delete (a writer holds the parent row) is killed with
# SIGKILL; a new run finalizes: the parent row lock is held for one short
# step, and only once the parent is empty.
. "$(dirname "$0")/lib.sh"
crash_init parent

q "SELECT cleanup_lab.seed_demo(2, 3, ${CRASH_PARENT_ITEMS:-1500})" >/dev/null
read -r s1 s2 < <(q "SELECT string_agg(id::text, ' ' ORDER BY id) FROM inventory.media_servers")
lib=$(q "SELECT min(id) FROM inventory.libraries WHERE server_id = :'s'" -v s="$s1")
snapshot before

# step_until_finalizing JOB CMD...: runs CMD (one step) until the job leaves
# draining; at most 200 steps.
step_until_finalizing() {
	local job=$1 i
	shift
	for ((i = 0; i < 200; i++)); do
		[ "$(job_field "$job" phase)" = draining ] || return 0
		"$@" >/dev/null || fail "one step of job $job: exit $?"
	done
	fail "job $job still draining after 200 steps"
}

# sqlstate_of SQL [-v name=value ...]: the SQLSTATE SQL fails with (empty
# when it succeeds).
sqlstate_of() {
	local sql=$1
	shift
	psql -X -q -At -v VERBOSITY=sqlstate "$@" "$CONN" <<<"$sql" 2>&1 >/dev/null | sed -n 's/^ERROR: *//p' | head -1
}

# hold_library_row ID: a transaction holding library ID's row FOR KEY SHARE
# (as a sync writer's foreign-key check does) until released.
hold_library_row() {
	PGAPPNAME=crash-parent-holder psql -X -q -v ON_ERROR_STOP=1 -v id="$1" "$CONN" >/dev/null 2>&1 <<-'SQL' &
		BEGIN;
		SELECT 1 FROM inventory.libraries WHERE id = :'id' FOR KEY SHARE;
		SELECT pg_sleep(3600);
	SQL
	HOLDER_PID=$!
	CRASH_BG_PIDS+=("$HOLDER_PID")
	wait_for "SELECT count(*) FROM crashtest.activity
	           WHERE application_name = 'crash-parent-holder' AND query LIKE '%pg_sleep%'" 1 \
		"the parent row holder"
}

release_parent_row() {
	q "SELECT count(pg_terminate_backend(pid)) FROM crashtest.activity
	    WHERE application_name = 'crash-parent-holder'" >/dev/null
	wait "$HOLDER_PID" 2>/dev/null || true
	wait_for "SELECT count(*) FROM crashtest.activity WHERE application_name = 'crash-parent-holder'" 0 \
		"the parent row holder to end"
}

# kill_while_busy JOB: starts `job run JOB`, waits until it has been told
# busy at least once (an event of kind busy), kills it with SIGKILL.
kill_while_busy() {
	local job=$1 busy
	busy=$(q "SELECT count(*) FROM cleanup.events WHERE job_id = :'job' AND kind = 'busy'" -v job="$job")
	start_run "$job"
	wait_for "SELECT count(*) > :'busy' FROM cleanup.events WHERE job_id = :'job' AND kind = 'busy'" t \
		"job run $job to be told busy at the parent delete" -v busy="$busy" -v job="$job"
	kill -9 "$RUN_PID"
	wait_run
	assert_eq "$RUN_RC" 137 "exit status of the killed job run"
}

# --- remove-library: drain one step at a time ---
job=$(job_create remove-library "$lib")
step_until_finalizing "$job" "$CLEANUPCTL" --db "$CONN" --json job step "$job"
check_consistent "$job" "after the drain"
assert_eq "$(job_field "$job" phase)" finalizing "phase right after the drain"
assert_eq "$(q "SELECT count(*) FROM inventory.libraries WHERE id = :'lib'" -v lib="$lib")" 1 "the parent still exists"
assert_eq "$(q "SELECT count(*) FROM inventory.items WHERE library_id = :'lib'" -v lib="$lib")" 0 "items left in it"
assert_eq "$(q "SELECT count(*) FROM cleanup.job_steps WHERE job_id = :'job' AND parent_lock_ms IS NOT NULL" \
	-v job="$job")" 0 "steps that held the parent row lock during the drain"
# The empty parent is still fenced and still guarded.
assert_eq "$(sqlstate_of "INSERT INTO inventory.items (library_id, external_id) VALUES (:'lib', 'late')" -v lib="$lib")" CUA01 \
	"insert into the drained library"
assert_eq "$(sqlstate_of "DELETE FROM inventory.libraries WHERE id = :'lib'" -v lib="$lib")" CUA05 \
	"delete of the empty library outside the protocol"
# The preview shows the parent delete and does nothing.
preview=$("$CLEANUPCTL" --db "$CONN" --json job step "$job" --preview)
assert_eq "$(jq -r '.steps[0] | .action + " " + (.libraries_deleted | tostring) + " " + (.preview | tostring)' \
	<<<"$preview")" "delete-library 1 true" \
	"preview of the finalize step"
assert_eq "$(q "SELECT count(*) FROM inventory.libraries WHERE id = :'lib'" -v lib="$lib")" 1 \
	"the parent after the preview"

# Crash at the parent delete: a writer holds the parent row, the run is
# told busy and retries, and is killed meanwhile.
hold_library_row "$lib"
kill_while_busy "$job"
release_parent_row
check_consistent "$job" "after the kill at the parent delete"
assert_eq "$(job_field "$job" phase)" finalizing "phase after the crash"
assert_eq "$(q "SELECT count(*) FROM inventory.libraries WHERE id = :'lib'" -v lib="$lib")" 1 \
	"the empty parent after the crash"

# The next run finalizes, in one short step.
resume "$job"
check_consistent "$job" "after finalizing"
assert_eq "$(q "SELECT count(*) FROM inventory.libraries WHERE id = :'lib'" -v lib="$lib")" 0 "the parent after finalize"
assert_eq "$(q "SELECT action || ' ' || libraries_deleted || ' ' || (parent_lock_ms IS NOT NULL) || ' ' || phase_after
                  FROM cleanup.job_steps WHERE job_id = :'job' ORDER BY step_no DESC LIMIT 1" -v job="$job")" \
	"delete-library 1 true completed" "the finalize step"
assert_eq "$(job_field "$job" "deleted")" \
	"$(q "SELECT count(*) FROM crashtest.before WHERE library_id = :'lib'" -v lib="$lib")" "deleted"
log "remove-library job $job: empty parent finalized after the crash"

# --- remove-server: drain with job run --max-steps 1, delete one library ---
job=$(job_create remove-server "$s2")
step_until_finalizing "$job" "$CLEANUPCTL" --db "$CONN" --json job run "$job" --max-steps 1
check_consistent "$job" "server after the drain"
assert_eq "$(q "SELECT count(*) FROM inventory.items i JOIN inventory.libraries l ON l.id = i.library_id
                 WHERE l.server_id = :'s'" -v s="$s2")" 0 "items left on the drained server"
assert_eq "$(q "SELECT count(*) FROM inventory.libraries WHERE server_id = :'s'" -v s="$s2")" 3 \
	"libraries of the drained server"
assert_eq "$(sqlstate_of "DELETE FROM inventory.media_servers WHERE id = :'s'" -v s="$s2")" CUA05 \
	"delete of the server outside the protocol"
# One library per step (S10).
"$CLEANUPCTL" --db "$CONN" --quiet job run "$job" --max-steps 1 >/dev/null
assert_eq "$(q "SELECT count(*) FROM inventory.libraries WHERE server_id = :'s'" -v s="$s2")" 2 \
	"libraries after one finalize step"
# Crash while the next library's delete is held busy.
next=$(q "SELECT min(id) FROM inventory.libraries WHERE server_id = :'s'" -v s="$s2")
hold_library_row "$next"
kill_while_busy "$job"
release_parent_row
check_consistent "$job" "server after the kill at a library delete"
assert_eq "$(q "SELECT count(*) FROM inventory.libraries WHERE server_id = :'s'" -v s="$s2")" 2 \
	"libraries after the crash"
resume "$job"
check_consistent "$job" "server after finalizing"
assert_eq "$(q "SELECT count(*) FROM inventory.media_servers WHERE id = :'s'" -v s="$s2")" 0 "the server after finalize"
assert_eq "$(q "SELECT string_agg(action || ':' || libraries_deleted || ':' || servers_deleted, ' ' ORDER BY step_no)
                  FROM cleanup.job_steps WHERE job_id = :'job' AND parent_lock_ms IS NOT NULL" -v job="$job")" \
	"delete-library:1:0 delete-library:1:0 delete-library:1:0 delete-server:0:1" \
	"parent steps of the server removal, one parent each, the server last"
# Server 1 (but for the drained library of the first part) is untouched.
assert_eq "$(q "SELECT count(*) FROM inventory.items i JOIN inventory.libraries l ON l.id = i.library_id
                 WHERE l.server_id = :'s'" -v s="$s1")" \
	"$(q "SELECT count(*) FROM crashtest.before WHERE server_id = :'s' AND library_id <> :'lib'" -v s="$s1" -v lib="$lib")" \
	"items of server 1"
log "PASS: empty parents finalized by the next run after crashes between drain and parent delete"
