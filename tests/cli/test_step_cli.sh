#!/bin/bash
# cleanupctl job step / job run / job show's steps through the real binary:
# usage errors (exit 2, naming the value and the rule, nothing changed),
# refusals (exit 4), unknown jobs and steps (exit 1), --json documents
# checked with jq, --replay and --preview, run's stop reasons, progress on a
# terminal, and the recent-steps table of job show.
. "$(dirname "$0")/lib_foundation.sh"

db_fresh cleanup_lab_t_cli_step
sql "SELECT cleanup_lab.seed_demo(2, 2, 300)" >/dev/null
# Server 1: libraries 1, 2; server 2: libraries 3, 4; ext-<lib>-1..300 each.
J=$(sql "SELECT id FROM cleanup.job_create('prune', 1)")

CURRENT="usage errors"
before=$(fingerprint)
run job step
expect 2 "job step needs a job id"
run job step abc
expect 2 "job id must be an integer" '"abc"'
run job step "$J" --steps 0
expect 2 "--steps must be an integer from 1" '"0"'
run job step "$J" --replay x
expect 2 "--replay must be an integer" '"x"'
run job step "$J" --preview --replay 1
expect 2 "one of --steps, --replay and --preview"
run job step "$J" --bogus
expect 2 'unexpected argument "--bogus"'
run job run "$J" --deadline -1
expect 2 "--deadline must be a number of seconds above 0" '"-1"'
run job run "$J" --deadline soon
expect 2 '"soon"'
run job run "$J" --max-steps 0
expect 2 "--max-steps must be an integer from 1" '"0"'
run job run "$J" --synchronous-commit maybe
expect 2 "--synchronous-commit must be on or off" '"maybe"'
run --json job step "$J" --steps=-3
expect 2
same "$(jq -r .error.exit_code <<<"$OUT")" "2" "usage error as JSON"
unchanged "$before"

CURRENT="unknown job (exit 1)"
run job step 99999
expect 1 "job 99999 does not exist"
run job run 99999
expect 1 "job 99999 does not exist"

CURRENT="a step of a collecting job is refused (exit 4)"
run job step "$J"
expect 4 "refused" "phase collecting" "seal it first"
run --json job run "$J"
expect 4
same "$(jq -r .error.sqlstate <<<"$OUT")" "CU400" "refusal SQLSTATE"
unchanged "$before"

# Seal with every even item seen: 150 seen, 150 eligible. (Ids follow the
# external IDs' text order, so a step stops after its 128th candidate
# having passed 128 seen rows: 256 rows examined, then the remaining 44.)
sql "SELECT cleanup.job_append($J, ARRAY(SELECT 'ext-1-' || g FROM generate_series(2, 256, 2) g))" >/dev/null
sql "SELECT cleanup.job_append($J, ARRAY(SELECT 'ext-1-' || g FROM generate_series(258, 300, 2) g))" >/dev/null
sql "SELECT cleanup.job_seal($J, 150)" >/dev/null

CURRENT="preview --json mutates nothing"
before=$(fingerprint)
run --json job step "$J" --preview
expect 0
unchanged "$before"
same "$(jq -c '[.steps[0].preview, .steps[0].step_no, .steps[0].action, .steps[0].examined, .steps[0].visited, .steps[0].deleted, .steps[0].kept, .job.step_no]' <<<"$OUT")" \
	'[true,1,"drain",256,128,128,128,0]' "preview of step 1"
run job step "$J" --preview
expect 0 "preview of step 1: drain" "would examine 256 rows" "would visit 128 candidates" "would delete 128"

CURRENT="step --json"
run --json job step "$J"
expect 0
same "$(jq -c '[.job.id, .job.step_no, .job.phase, (.steps | length), .steps[0].step_no, .steps[0].examined, .steps[0].visited, .steps[0].deleted, .steps[0].kept, .steps[0].mutations, .steps[0].checked, .steps[0].replayed]' <<<"$OUT")" \
	"[$J,1,\"draining\",1,1,256,128,128,128,128,0,false]" "step 1 as JSON"
jq -e '.steps[0] | has("duration_ms") and has("lock_hold_ms") and has("parent_lock_ms") and has("cursor_from") and has("cursor_to")' \
	<<<"$OUT" >/dev/null || fail "step JSON lacks timing or cursor keys"

CURRENT="step --steps 1, human"
run job step "$J" --steps 1
expect 0 "step 2: drain, pass 1, library 1" "examined 44 rows" "kept 22 seen; visited 22 candidates: deleted 22" \
	"phase after: finalizing"

CURRENT="replay (S8)"
before=$(fingerprint)
run --json job step "$J" --replay 2
expect 0
same "$(jq -c '[.steps[0].step_no, .steps[0].replayed, .job.step_no]' <<<"$OUT")" "[2,true,2]" "replay of step 2"
run job step "$J" --replay 2
expect 0 "step 2 (recorded, replayed; nothing was done)"
run job step "$J" --replay 7
expect 1 "job $J has no committed step 7" "steps 1 to 2 can be replayed"
unchanged "$before"

CURRENT="run --json to completion"
run --json job run "$J"
expect 0
same "$(jq -c '[.completed, .stopped, .stop_reason, .job.phase, .job.deleted, .job.kept, .job.visited, .job.examined, .busy_retries]' <<<"$OUT")" \
	'[true,false,"completed","completed",150,150,150,300,0]' "run summary"
run job run "$J"
expect 0 "job $J is already completed"
run job step "$J"
expect 4 "phase completed" "--replay STEP_NO"

CURRENT="job show lists recent steps"
run job show "$J" --steps 3
expect 0 "recent steps (newest first)" "final-check" "completed"
same "$(grep -c '^ *[0-9]\+ \(drain\|pass\|final-check\)' <<<"$OUT")" "3" "three step rows"

CURRENT="run --max-steps / --deadline stop reasons"
K=$(sql "SELECT id FROM cleanup.job_create('remove-library', 3)")
run --json job run "$K" --max-steps 1
expect 0
same "$(jq -c '[.steps_taken, .stopped, .stop_reason, .job.step_no, .job.phase]' <<<"$OUT")" '[1,true,"max-steps",1,"draining"]' "max-steps"
run --json job run "$K" --deadline 0.000001
expect 0
same "$(jq -c '[.stopped, .stop_reason, .job.step_no]' <<<"$OUT")" '[true,"deadline",1]' "deadline before the next step"
run --json job run "$K" --synchronous-commit off
expect 0
same "$(jq -c '[.completed, .job.phase, .job.deleted, .job.libraries_deleted]' <<<"$OUT")" '[true,"completed",300,1]' "remove-library"

CURRENT="progress on a terminal"
if command -v script >/dev/null; then
	L=$(sql "SELECT id FROM cleanup.job_create('remove-library', 4)")
	script -qec "'$CLEANUPCTL' --db \"$DB\" job run $L" /dev/null >"$TMPD/tty" 2>&1
	RC=$?
	OUT=$(tr '\r' '\n' <"$TMPD/tty")
	ERR=""
	expect 0 "job $L: 300 of 300 (100.0%)" "/s, step" "completed"
fi

# One runner per job (F2): while another
# runner holds the job's lease, job step is busy (exit 3), names the holder
# and changes nothing; once the holder's backend is gone its lease is taken
# over (an event says "runner lost") and the step goes.
CURRENT="one runner per job"
sql "SELECT cleanup_lab.seed_demo(1, 1, 10)" >/dev/null
R=$(sql "SELECT id FROM cleanup.job_create('remove-library', (SELECT max(id) FROM inventory.libraries))")
[ -n "$R" ] || fail "job create for the runner check"

psql -X -q "$DB" -c "SET application_name = 'other-runner'" \
	-c "INSERT INTO cleanup.job_runners (job_id, token, host, os_pid, application, direct, backend_pid, server_start, ttl)
	    VALUES ($R, 7, 'elsewhere', 4711, 'other-runner', true, pg_backend_pid(), pg_postmaster_start_time(), interval '10 min')" \
	-c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
holder=$!
for _ in $(seq 1 200); do
	[ "$(sql "SELECT count(*) FROM cleanup.job_runners r WHERE job_id = $R AND cleanup.runner_live(r)")" = 1 ] && break
	sleep 0.05
done
before=$(fingerprint)
run job step "$R"
expect 3 "already being run" "other-runner" "elsewhere:4711"
same "$(fingerprint)" "$before" "job step refused by the runner lease changes nothing"
sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'other-runner'" >/dev/null
wait "$holder" 2>/dev/null
for _ in $(seq 1 200); do
	[ "$(sql "SELECT count(*) FROM cleanup.job_runners r WHERE job_id = $R AND cleanup.runner_live(r)")" = 0 ] && break
	sleep 0.05
done
run job step "$R"
expect 0 "step 1"
same "$(sql "SELECT count(*) FROM cleanup.events WHERE job_id = $R AND kind = 'runner_lost'
             AND message LIKE 'runner lost: elsewhere:4711 (other-runner), last step none at %its connection is gone%'")" 1 \
	"the take-over of a lost runner's lease is recorded"
same "$(sql "SELECT count(*) FROM cleanup.job_runners WHERE job_id = $R")" 0 "job step ends its lease"

finish
