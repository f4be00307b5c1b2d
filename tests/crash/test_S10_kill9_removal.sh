#!/bin/bash
# S7, S9, S10, S11: `cleanupctl job run` of a remove-library and of a
# remove-server job is killed with SIGKILL at random moments, many times,
# and resumed by new processes (make soak only: random timing). At the end every item of the scope is
# deleted once and counted once, parents were deleted only after their
# inventory had been drained (never by a cascade), one library per step and
# the server last, and everything outside the scope is untouched.
# make soak only (exit 77, skipped, unless CLEANUP_CRASH_ROUNDS is set): the
# kills fall at random moments; test_FP_*.sh hit the same invariants at
# named failpoints, deterministically, in make test.
. "$(dirname "$0")/lib.sh"
soak_only
crash_init kill9_removal

# Three servers of three libraries, plus an empty library on server 2.
q "SELECT cleanup_lab.seed_demo(3, 3, ${CRASH_REMOVAL_ITEMS:-$(scaled 15000)})" >/dev/null
read -r s1 s2 s3 < <(q "SELECT string_agg(id::text, ' ' ORDER BY id) FROM inventory.media_servers")
q "INSERT INTO inventory.libraries (server_id, name) VALUES (:'s', 'Empty')" -v s="$s2" >/dev/null
lib=$(q "SELECT min(id) FROM inventory.libraries WHERE server_id = :'s'" -v s="$s1")
snapshot before

# killed_removal_done KIND JOB ROUNDS WANT LIBS SERVERS: the removal JOB
# is killed in ROUNDS runs, its steps replay, a new process resumes it; then
# it is consistent and completed, deleted and visited WANT items, LIBS
# libraries and SERVERS servers, and moved, found absent, retained or kept
# none.
killed_removal_done() {
	local kind=$1 job=$2
	kill9_rounds "$job" "$3"
	check_replay "$job"
	resume "$job"
	check_consistent "$job" "$kind after resume"
	assert_eq "$(job_field "$job" phase)" completed "$kind phase"
	assert_eq "$(job_field "$job" "deleted || ' ' || visited || ' ' || libraries_deleted || ' ' || servers_deleted")" \
		"$4 $4 $5 $6" "$kind deleted, visited, libraries_deleted, servers_deleted"
	assert_eq "$(job_field "$job" "moved + absent + retained + kept")" 0 "$kind moved + absent + retained + kept"
}

# --- remove-library of the first library of server 1 ---
want=$(q "SELECT count(*) FROM crashtest.before WHERE library_id = :'lib'" -v lib="$lib")
job=$(job_create remove-library "$lib")
killed_removal_done remove-library "$job" $((want / 128 + 2)) "$want" 1 0
assert_eq "$(q "SELECT count(*) FROM inventory.libraries WHERE id = :'lib'" -v lib="$lib")" 0 "library row"
assert_eq "$(q "SELECT count(*) FROM cleanup.library_admission WHERE library_id = :'lib'" -v lib="$lib")" 0 \
	"library admission row"
outside_unchanged "$lib" 0
parents_after_drain "$job"
check_replay "$job"
log "remove-library job $job exact after $KILLS kills"

# --- remove-server of server 2 (three full libraries and an empty one) ---
want=$(q "SELECT count(*) FROM crashtest.before WHERE server_id = :'s'" -v s="$s2")
nlibs=$(q "SELECT count(*) FROM inventory.libraries WHERE server_id = :'s'" -v s="$s2")
job=$(job_create remove-server "$s2")
killed_removal_done remove-server "$job" $((want / 128 + 2 * nlibs + 1)) "$want" "$nlibs" 1
assert_eq "$(q "SELECT count(*) FROM inventory.media_servers WHERE id = :'s'" -v s="$s2")" 0 "server row"
assert_eq "$(q "SELECT count(*) FROM inventory.libraries WHERE server_id = :'s'" -v s="$s2")" 0 "libraries of the server"
assert_eq "$(q "SELECT count(*) FROM cleanup.server_admission WHERE server_id = :'s'" -v s="$s2")" 0 \
	"server admission row"
outside_unchanged "$lib" "$s2"
parents_after_drain "$job"
assert_eq "$(q "SELECT count(*) FROM cleanup.job_steps WHERE job_id = :'job' AND action = 'delete-library'" -v job="$job")" \
	"$nlibs" "delete-library steps, one per library"
assert_eq "$(q "SELECT state FROM cleanup.server_admission WHERE server_id = :'s'" -v s="$s3")" open \
	"admission of server 3"
check_replay "$job"
log "PASS: remove-server job $job exact after $KILLS kills"
