#!/bin/bash
# SIGTERM and SIGHUP stop `job run`, `job step --steps N` and `worker`
# after the step in flight, with a summary: a supervisor
# (systemd's stop, a closed terminal, kill) gets the same clean stop as a
# first Ctrl-C. The step running commits, no step starts after it, the
# command prints what it did and exits 130 (job run, job step; `worker`
# exits 0, a service's clean stop); a second SIGTERM never cancels the
# step running (only a second Ctrl-C does). Every wait is on an observed
# state (a backend waiting on the step_before_commit failpoint's lock, a
# line printed). Before the fix SIGTERM killed job run and job step
# mid-step (exit 143, no summary) and SIGHUP killed the worker.
. "$(dirname "$0")/lib_foundation.sh"

. "$(dirname "$0")/lib_interrupt.sh"

step_no() { sql "SELECT step_no FROM cleanup.jobs WHERE id = $J"; }

for SIG in TERM HUP; do
	CURRENT="job run: SIG$SIG during step 1 finishes it, then stops with a summary"
	new_job "cleanup_lab_t_cli_sig_run_${SIG,,}"
	run_held "a step" job run "$J"
	kill -"$SIG" "$PID"
	wait_for "the SIG$SIG noted" said "$TMPD/err" "SIG$SIG: finishing the current step"
	# a second one changes nothing: the step is not cancelled
	kill -"$SIG" "$PID"
	hold_end
	collect "$PID"
	expect 130 "job $J: 1 step in" "interrupted; phase draining, step 1" "stopped by SIG$SIG after the step in flight"
	same "$(step_no)" "1" "the step in flight committed and nothing after it (SIG$SIG)"
	grep -q "cancel request" <<<"$ERR" && fail "a SIG$SIG cancelled the step running ($CURRENT)"

	CURRENT="job run --json: SIG$SIG, one document naming the signal"
	run_held "a step" --json job run "$J"
	kill -"$SIG" "$PID"
	wait_for "the SIG$SIG noted" said "$TMPD/err" "SIG$SIG: finishing the current step"
	hold_end
	collect "$PID"
	expect 130
	same "$(jq -c '[.interrupted, .steps_taken, .stop_reason, .signal, .job.step_no]' <<<"$OUT")" \
		"[true,1,\"interrupted\",\"SIG$SIG\",2]" "run --json after SIG$SIG"

	CURRENT="job step --steps 5: SIG$SIG during the step finishes it, then stops"
	run_held "a step" job step "$J" --steps 5
	kill -"$SIG" "$PID"
	wait_for "the SIG$SIG noted" said "$TMPD/err" "SIG$SIG: finishing the current step"
	hold_end
	collect "$PID"
	expect 130 "step 3: " "interrupted by SIG$SIG after 1 step of this command; the job is at step 3"
	same "$(step_no)" "3" "job step: the step in flight committed and nothing after it (SIG$SIG)"
done

CURRENT="worker: SIGHUP stops after the step in flight, releases the job, exit 0"
new_job cleanup_lab_t_cli_sig_worker
run_held "a step" worker --server 1
kill -HUP "$PID"
wait_for "the worker to say it is stopping" said "$TMPD/out" "SIGHUP: stopping"
hold_end
collect "$PID"
expect 0
same "$(step_no)" "1" "worker: the step in flight committed and nothing after it"
# the job is free again: a run completes it
run --quiet job run "$J"
expect 0
same "$(sql "SELECT phase FROM cleanup.jobs WHERE id = $J")" "completed" "a run after the worker's SIGHUP completes the job"

finish
