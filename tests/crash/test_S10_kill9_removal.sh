#!/bin/bash
# S7, S9, S10, S11: `cleanupctl job run` of a remove-library and of a
# remove-server job is killed with SIGKILL at random moments, many times,
# and resumed by new processes. At the end every item of the scope is
# deleted once and counted once, parents were deleted only after their
# inventory had been drained (never by a cascade), one library per step and
# the server last, and everything outside the scope is untouched.
. "$(dirname "$0")/lib.sh"
crash_init kill9_removal

# Three servers of three libraries, plus an empty library on server 2.
q "SELECT cleanup.seed_demo(3, 3, ${CRASH_REMOVAL_ITEMS:-$(scaled 15000)})" >/dev/null
read -r s1 s2 s3 < <(q "SELECT string_agg(id::text, ' ' ORDER BY id) FROM inventory.media_servers")
q "INSERT INTO inventory.libraries (server_id, name) VALUES (:'s', 'Empty')" -v s="$s2" >/dev/null
lib=$(q "SELECT min(id) FROM inventory.libraries WHERE server_id = :'s'" -v s="$s1")
snapshot before

# outside_unchanged LIB SERVER: the rows outside library LIB and server
# SERVER (0: none) are exactly as before.
outside_unchanged() {
	local scope="i.id IN (SELECT id FROM crashtest.before WHERE library_id = :'lib' OR server_id = :'srv')"
	assert_eq "$(q "SELECT count(*) FROM (
		(SELECT i.id, i.library_id, i.external_id FROM inventory.items i WHERE NOT ($scope)
		 EXCEPT SELECT i.id, i.library_id, i.external_id FROM crashtest.before i WHERE NOT ($scope))
		UNION ALL
		(SELECT i.id, i.library_id, i.external_id FROM crashtest.before i WHERE NOT ($scope)
		 EXCEPT SELECT i.id, i.library_id, i.external_id FROM inventory.items i WHERE NOT ($scope))) d" \
		-v lib="$1" -v srv="$2")" 0 "rows outside library $1 and server $2 changed"
}

# parents_after_drain JOB: every delete-library step of JOB comes after the
# last step that visited rows of that library, and the delete-server step
# comes last; each parent step deleted exactly one parent (S10, S13).
parents_after_drain() {
	local job=$1
	assert_eq "$(q "SELECT count(*) FROM cleanup.job_steps p
	                 WHERE p.job_id = :'job' AND p.action = 'delete-library'
	                   AND (p.libraries_deleted <> 1 OR p.parent_lock_ms IS NULL OR EXISTS (
	                        SELECT 1 FROM cleanup.job_steps d
	                         WHERE d.job_id = p.job_id AND d.library_id = p.library_id
	                           AND d.visited > 0 AND d.step_no > p.step_no))" -v job="$job")" 0 \
		"delete-library steps before their library's drain ended, or deleting other than one library"
	assert_eq "$(q "SELECT count(*) FROM cleanup.job_steps p
	                 WHERE p.job_id = :'job' AND p.action = 'delete-server'
	                   AND (p.servers_deleted <> 1 OR p.step_no <> (SELECT max(step_no) FROM cleanup.job_steps
	                                                                 WHERE job_id = p.job_id))" -v job="$job")" 0 \
		"delete-server step not last or deleting other than one server"
}

# --- remove-library of the first library of server 1 ---
want=$(q "SELECT count(*) FROM crashtest.before WHERE library_id = :'lib'" -v lib="$lib")
job=$(job_create remove-library "$lib")
kill9_rounds "$job" $((want / 128 + 2))
check_replay "$job"
resume "$job"
check_consistent "$job" "remove-library after resume"
assert_eq "$(job_field "$job" phase)" completed "remove-library phase"
assert_eq "$(job_field "$job" "deleted || ' ' || visited || ' ' || libraries_deleted || ' ' || servers_deleted")" \
	"$want $want 1 0" "remove-library deleted, visited, libraries_deleted, servers_deleted"
assert_eq "$(job_field "$job" "moved + absent + retained + kept")" 0 "remove-library moved + absent + retained + kept"
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
kill9_rounds "$job" $((want / 128 + 2 * nlibs + 1))
check_replay "$job"
resume "$job"
check_consistent "$job" "remove-server after resume"
assert_eq "$(job_field "$job" phase)" completed "remove-server phase"
assert_eq "$(job_field "$job" "deleted || ' ' || visited || ' ' || libraries_deleted || ' ' || servers_deleted")" \
	"$want $want $nlibs 1" "remove-server deleted, visited, libraries_deleted, servers_deleted"
assert_eq "$(job_field "$job" "moved + absent + retained + kept")" 0 "remove-server moved + absent + retained + kept"
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
