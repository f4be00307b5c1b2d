#!/bin/bash
# S7 (a step commits whole or not at all), S8 (a replay returns the record
# and changes nothing), S9 (a new process resumes exactly), S13 (a crash
# between the drain and the parent delete): the runner, `cleanupctl job
# run`, is killed with SIGKILL while a named failpoint holds its step
# (step_after_discovery, step_after_delete, step_before_commit, final_check,
# step_before_parent_delete) for a prune, a remove-library and a
# remove-server job. Its backend, unaware, holds the step: a second runner
# is busy, never a second execution; released, the orphan commits the held
# step once. A new process resumes; the end state equals the ground truth
# exactly. No timing: each kill happens where the runner was observed
# waiting (tests/crash/matrix.sh, docs/testing.md).
. "$(dirname "$0")/lib.sh"
# Targets: 13 libraries and 6 servers.
FP_LIB_SERVERS=13 FP_REMOVE_SERVERS=6
. "$(dirname "$0")/matrix.sh"
crash_init fp_kill9
matrix_data
fp_step_matrix kill9 claims
log "PASS: failpoint matrix, kill -9 of the runner: 19 cells exact (7 with claims in flight or library dependents)"
