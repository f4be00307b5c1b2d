#!/bin/bash
# Ctrl-C in `job step --steps N`, as in `job run`: the
# first SIGINT lets the step running commit, stops before the next, says
# what was done (steps of this command, the job's step as the database has
# it) and exits 130; a second SIGINT cancels the step running (it rolls
# back), exit 130. Every wait is on an observed state (a backend waiting
# on the step_before_commit failpoint's lock, a message printed), never on
# time. Before the fix the first SIGINT killed the process mid-step.
. "$(dirname "$0")/lib_foundation.sh"

. "$(dirname "$0")/lib_interrupt.sh"

CURRENT="job step --steps 5: Ctrl-C during step 1 finishes it, then stops"
new_job cleanup_lab_t_cli_intr_step1
run_held "step 1" job step "$J" --steps 5
kill -INT "$PID"
wait_for "the first Ctrl-C noted" said "$TMPD/err" "finishing the current step"
hold_end
collect "$PID"
expect 130 "step 1: " "interrupted by Ctrl-C after 1 step of this command; the job is at step 1"
same "$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")" "1" "the step running committed and nothing after it"
grep -q "^step 2" <<<"$OUT" && fail "a step ran after the Ctrl-C ($CURRENT)"

CURRENT="job step --steps 5 --json: Ctrl-C after step 1, one document"
run_held "step 2" --json job step "$J" --steps 5
kill -INT "$PID"
wait_for "the first Ctrl-C noted" said "$TMPD/err" "finishing the current step"
hold_end
collect "$PID"
expect 130
same "$(jq -c '[.interrupted, (.steps | length), .job.step_no]' <<<"$OUT")" "[true,1,2]" "step --json after a Ctrl-C"
same "$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")" "2" "one more step, then stopped"

CURRENT="job step --steps 5: a second Ctrl-C cancels the step running"
run_held "step 3" job step "$J" --steps 5
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
