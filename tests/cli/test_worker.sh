#!/bin/bash
# cleanupctl worker through the real binary:
#  - four jobs on four servers, two workers of two runners each: every job
#    completed exactly once (one claim, one completion, no step run twice)
#    with the counts a single run gives;
#  - one runner per job: while a worker's runner holds a job, `job run` of
#    it is refused naming the worker's backend, `cleanupctl locks` names the
#    runner, and another worker leaves the job alone;
#  - SIGTERM stops after the step in flight (it commits), releases the
#    runner lease, exits 0, and a later worker completes the job.
# Every wait is on an observed state (a step waiting at its failpoint's
# advisory lock in pg_locks, a line the worker printed, a process ending),
# never on time.
. "$(dirname "$0")/lib_foundation.sh"
. "$(dirname "$0")/lib_interrupt.sh"

# runner_pid JOB: the backend of JOB's live runner lease ("" when none).
runner_pid() {
	sql "SELECT backend_pid FROM cleanup.job_runners r WHERE job_id = $1 AND cleanup.runner_live(r)"
}

# worker_at_step1 NAME [ARGS...]: with the step_before_commit failpoint's
# lock held (hold_start), starts `cleanupctl worker ARGS` with that
# failpoint on, its output in $TMPD/NAME and $TMPD/NAME.err, and returns
# once the step 1 it runs of job $J waits at the failpoint (pg_locks). Sets
# WPID (the worker), KEY and RP (the backend holding $J's runner lease).
worker_at_step1() {
	local name=$1
	shift
	KEY=$(sql "SELECT cleanup.failpoint_key('step_before_commit')")
	hold_start "$KEY"
	PGOPTIONS='-c cleanup.failpoints=step_before_commit' "$CLEANUPCTL" --db "$DB" worker "$@" \
		>"$TMPD/$name" 2>"$TMPD/$name.err" </dev/null 7>&- &
	WPID=$!
	wait_for "step 1 at its failpoint" lock_waited "$KEY"
	RP=$(runner_pid "$J")
}

# prune_jobs N ITEMS SEEN: N servers of one library of ITEMS items, and on
# each a sealed prune with the first SEEN items of the library seen. Sets
# JOBS (their ids).
prune_jobs() {
	local s lib j
	sql "SELECT cleanup_lab.seed_demo($1, 1, $2)" >/dev/null
	JOBS=""
	for lib in $(sql "SELECT id FROM inventory.libraries ORDER BY id"); do
		j=$(sql "SELECT id FROM cleanup.job_create('prune', $lib)")
		if [ "$3" -gt 0 ]; then
			sql "SELECT external_id FROM inventory.items WHERE library_id = $lib ORDER BY id LIMIT $3" >"$TMPD/seen"
			"$CLEANUPCTL" --quiet --db "$DB" job append "$j" <"$TMPD/seen" >/dev/null || fail "append to job $j"
		fi
		"$CLEANUPCTL" --quiet --db "$DB" job seal "$j" --expected "$3" >/dev/null || fail "seal job $j"
		JOBS="$JOBS $j"
	done
}

CURRENT="worker: usage"
db_fresh cleanup_lab_t_cli_worker0
run worker --concurrency 0
expect 2 "--concurrency" "\"0\""
run worker --concurrency 2 --concurrency 3
expect 2 "--concurrency given twice"
run worker --poll abc
expect 2 "--poll" "\"abc\""
run worker --synchronous-commit maybe
expect 2 "\"maybe\""
run worker --server 0
expect 2 "--server"
run worker --bogus
expect 2 "unexpected argument \"--bogus\""
run worker --server 99 --idle-exit
expect 2 "--server 99: no such media server"
run --json worker --idle-exit
expect 0
same "$(jq -sc '[.[0].event, .[-1].event, .[-1].reason, .[-1].jobs_completed]' <<<"$OUT")" \
	'["started","stopped","idle",0]' "worker --idle-exit with nothing to do"

CURRENT="worker: 4 jobs on 4 servers, 2 workers x 2 runners, each job completed exactly once"
db_fresh cleanup_lab_t_cli_worker1
prune_jobs 4 3000 100
"$CLEANUPCTL" --db "$DB" --json worker --concurrency 2 --idle-exit >"$TMPD/w1" 2>"$TMPD/w1.err" </dev/null &
W1=$!
"$CLEANUPCTL" --db "$DB" --json worker --concurrency 2 --idle-exit >"$TMPD/w2" 2>"$TMPD/w2.err" </dev/null &
W2=$!
wait "$W1"
RC1=$?
wait "$W2"
RC2=$?
same "$RC1 $RC2" "0 0" "both workers exit 0"
cat "$TMPD/w1" "$TMPD/w2" >"$TMPD/w12"
for j in $JOBS; do
	same "$(jq -s --argjson j "$j" '[.[] | select(.event == "claimed" and .job.id == $j)] | length' "$TMPD/w12")" "1" \
		"job $j claimed once"
	same "$(jq -s --argjson j "$j" '[.[] | select(.event == "finished" and .job.id == $j and .result == "completed")] | length' "$TMPD/w12")" \
		"1" "job $j completed once"
	same "$(sql "SELECT concat_ws(' ', phase, deleted, kept, step_no = (SELECT count(*) FROM cleanup.job_steps s WHERE s.job_id = j.id),
	               deleted = (SELECT sum(deleted) FROM cleanup.job_steps s WHERE s.job_id = j.id))
	             FROM cleanup.jobs j WHERE id = $j")" "completed 2900 100 t t" "job $j: counts"
done
same "$(jq -s '[.[] | select(.event == "finished") | .steps_taken] | add' "$TMPD/w12")" \
	"$(sql "SELECT sum(step_no) FROM cleanup.jobs")" "steps taken by the workers = steps recorded (none twice)"
same "$(sql "SELECT count(*) FROM inventory.items")" "400" "only the seen items are left"
same "$(jq -s '[.[] | select(.event == "stopped") | .jobs_completed] | add' "$TMPD/w12")" "4" \
	"the workers' summaries count 4 completions"
echo "  jobs per worker: $(jq -s '[.[] | select(.event == "finished")] | length' "$TMPD/w1") and $(jq -s '[.[] | select(.event == "finished")] | length' "$TMPD/w2")"

CURRENT="worker: one runner per job; job run refused naming the worker; SIGTERM after the step in flight"
db_fresh cleanup_lab_t_cli_worker2
prune_jobs 1 2000 1
J=${JOBS// /}
worker_at_step1 wa
WA=$WPID
[ -n "$RP" ] || fail "no runner lease held while the worker's step 1 runs"
same "$(sql "SELECT application_name FROM pg_stat_activity WHERE pid = ${RP:-0}")" "cleanupctl:job:$J:worker/1" \
	"the runner's backend names the job and the worker's runner"
said "$TMPD/wa" "worker/1: claimed job $J" || fail "the worker did not log its claim"

before=$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")
run job run "$J"
expect 3 "job $J is already being run by backend $RP (cleanupctl:job:$J:worker/1"
same "$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")" "$before" "the refused job run changed nothing"

run locks
expect 0 "runners (one per job" "job $J" "backend $RP" "cleanupctl:job:$J:worker/1"
run --json locks
expect 0
same "$(jq -c --argjson p "${RP:-0}" '.backends[] | select(.pid == $p) | [.runs_job, .job_id, (.runner_since != null)]' <<<"$OUT")" \
	"[$J,$J,true]" "locks --json: the runner and its job"

run --json worker --idle-exit
expect 0
same "$(jq -sc '[.[] | select(.event == "claimed")] | length' <<<"$OUT")" "0" \
	"a second worker leaves the held job alone"

kill -TERM "$WA"
wait_for "the worker to say it is stopping" said "$TMPD/wa" "SIGTERM: stopping"
hold_end
collect "$WA" "$TMPD/wa" "$TMPD/wa.err"
expect 0 "finished job $J: interrupted, 1 step," "stopped (signal)"
same "$(sql "SELECT phase || ' ' || step_no FROM cleanup.jobs WHERE id = $J")" "draining 1" \
	"the step in flight committed and none after it"
same "$(runner_pid "$J")" "" "the runner lease is released"

run --json worker --idle-exit
expect 0
same "$(jq -sc --argjson j "$J" '[.[] | select(.event == "claimed") | .job.step_no]' <<<"$OUT")" "[1]" \
	"a later worker resumes the job after step 1"
same "$(sql "SELECT phase || ' ' || deleted || ' ' || kept FROM cleanup.jobs WHERE id = $J")" "completed 1999 1" \
	"the job completed with every unseen item deleted once"

CURRENT="worker: a runner killed from the console (its backend terminated) is resumed, exactly once"
db_fresh cleanup_lab_t_cli_worker3
prune_jobs 1 1500 0
J=${JOBS// /}
worker_at_step1 wk --idle-exit --poll 0.2
WK=$WPID
same "$(sql "SELECT pg_terminate_backend(${RP:-0})")" "t" "the runner's backend terminated"
wait_for "the worker to log the lost run" said "$TMPD/wk" "finished job $J: lost"
hold_end
collect "$WK" "$TMPD/wk" "$TMPD/wk.err"
expect 0 "finished job $J: lost, 0 steps" "finished job $J: completed" "1 lost, 0 failed"
same "$(grep -c "claimed job $J" <<<"$OUT")" "2" "claimed again after the loss"
same "$(sql "SELECT phase || ' ' || deleted || ' ' || (step_no = (SELECT count(*) FROM cleanup.job_steps WHERE job_id = $J))
             FROM cleanup.jobs WHERE id = $J")" "completed 1500 true" "every item deleted once, no step twice"

finish
