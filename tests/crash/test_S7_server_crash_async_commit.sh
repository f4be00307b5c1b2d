#!/bin/bash
# S7, S9 with steps committed without waiting for the WAL flush
# (`job run --synchronous-commit off`, docs/steps.md "Settings"): the
# server itself is stopped with `pg_ctl stop -m immediate` (a crash: no
# checkpoint, recovery from the WAL at the next start) in the middle of a
# run, many times. Steps the client saw committed may be lost in the crash,
# but only whole: after recovery the job is at a consistent last committed
# step (its counters are the sum of its recorded steps) and a new run
# continues from there. A completion the run reported is never lost:
# completing steps and parent-deleting steps commit synchronously whatever
# the setting, so a crash right after `job run` said "completed" (exit 0)
# finds the job completed, its parents deleted and its state exact. The
# final state of a prune job and of a remove-server job equals the ground
# truth exactly.
#
# The crashes need a server of their own: this test starts a private
# sandbox (the shared test server keeps running for the other tests).
# make soak only (exit 77, skipped, unless CLEANUP_CRASH_ROUNDS is set): the
# kills fall at random moments; test_FP_*.sh hit the same invariants at
# named failpoints, deterministically, in make test.
. "$(dirname "$0")/lib.sh"
soak_only

private_sandbox immediate
crash_init server_crash

# crash_rounds JOB STEPS: about ROUNDS / 2 (at least 3) times, runs the job
# with --synchronous-commit off, crashes the server after a random delay
# spread over the job's STEPS, restarts it, and checks that the job is at a
# consistent last committed step and that the run exited non-zero, or
# reported a completion that the crash did not take back. How many crashes
# hit the job unfinished depends on the machine; it is reported, not required.
crash_rounds() {
	local job=$1 steps=$2 rounds=$((ROUNDS / 2 > 3 ? ROUNDS / 2 : 3)) i max db_step
	CRASHES=0
	calibrate "$job"
	max=$((2 * (35 * (steps - $(job_field "$job" step_no)) * STEP_MS / (100 * rounds) + START_MS)))
	for ((i = 1; i <= rounds; i++)); do
		[ "$(job_field "$job" phase)" = completed ] && break
		start_run "$job" --synchronous-commit off
		sleep_ms "$(rand "$START_MS" "$max")"
		crash_server
		wait_run
		db_step=$(job_field "$job" step_no)
		check_consistent "$job" "after server crash #$i (run exit $RUN_RC)"
		if [ "$RUN_RC" -eq 0 ]; then
			# The run finished before the crash: it reported completion,
			# and the completing step committed synchronously.
			jq -e '.completed == true' "$RUN_OUT" >/dev/null ||
				fail "job run exited 0 without completing, although the server crashed under it (crash #$i)"
			assert_eq "$(job_field "$job" phase)" completed \
				"phase after a crash that followed a reported completion (crash #$i)"
		elif [ "$(job_field "$job" phase)" != completed ]; then
			assert_eq "$RUN_RC" 1 "exit of job run whose server crashed under it (crash #$i)"
			CRASHES=$((CRASHES + 1))
		fi
		log "crash #$i: job $job at step $db_step after recovery (run exit $RUN_RC)"
	done
	log "job $job: $CRASHES server crashes hit it unfinished (reported, not required)"
}

# finish_then_crash JOB: runs the job to its end with --synchronous-commit
# off and crashes the server the moment `job run` has reported completion
# (exit 0, "completed": true). The completion must survive: the completing
# step (and a parent-deleting one) waited for its WAL flush, which also
# made every earlier asynchronous step durable.
finish_then_crash() {
	local job=$1
	start_run "$job" --synchronous-commit off
	wait_run
	assert_eq "$RUN_RC" 0 "exit of the finishing job run of job $job"
	jq -e '.completed == true' "$RUN_OUT" >/dev/null || fail "the finishing run of job $job did not complete"
	crash_server
	assert_eq "$(job_field "$job" phase)" completed "phase of job $job after a crash right after its reported completion"
	log "job $job: reported completed, then the server crashed: still completed"
}

q "SELECT cleanup_lab.seed_demo(2, 2, ${CRASH_SERVER_ITEMS:-$(scaled 15000)})" >/dev/null
read -r s1 s2 < <(q "SELECT string_agg(id::text, ' ' ORDER BY id) FROM inventory.media_servers")
lib=$(q "SELECT min(id) FROM inventory.libraries WHERE server_id = :'s'" -v s="$s1")
snapshot before

# --- prune: three of four items unseen (a step deletes 128 of them) ---
prune_soak "$lib" "id % 4 <> 0" crash_rounds finish_then_crash
log "prune job $job exact after $CRASHES server crashes and one right after its completion"

# --- remove-server of server 2 ---
remove_server_soak "$s2" "$lib" "id % 4 <> 0" crash_rounds finish_then_crash
log "PASS: remove-server job $job exact after $CRASHES server crashes and one right after its completion"
