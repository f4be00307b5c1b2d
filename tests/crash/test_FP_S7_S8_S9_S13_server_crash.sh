#!/bin/bash
# S7, S8, S9, S13: the server is crashed (`pg_ctl stop -m immediate`: no
# checkpoint, recovery from the WAL at the next start) while a named
# failpoint holds a step of `cleanupctl job run` (step_after_discovery,
# step_after_delete, step_before_commit, final_check,
# step_before_parent_delete) for a prune, a remove-library and a
# remove-server job. The held step leaves no trace; the steps the run had
# committed asynchronously before it may be lost, whole, never one that
# committed synchronously; a new process resumes to the exact ground truth.
# The crashes need a server of their own: this test starts a private
# sandbox (the shared test server keeps running for the other tests).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/matrix.sh"
private_sandbox fp_crash
crash_init fp_server_crash
matrix_data
fp_step_matrix immediate
log "PASS: failpoint matrix, server crashed: 12 cells exact"
