#!/bin/bash
# S7, S8, S9, S13: the backend of `cleanupctl job run` is terminated
# (pg_terminate_backend) while a named failpoint holds its step
# (step_after_discovery, step_after_delete, step_before_commit, final_check,
# step_before_parent_delete) for a prune, a remove-library and a
# remove-server job: the runner exits 1 (connection lost), the held step
# leaves no trace (job row, step records, manifest and inventory as before
# it), and a new process resumes to the exact ground truth. `job run
# --reconnect 1` reconnects by itself, meets the point again and, released,
# completes exactly. No timing (tests/crash/matrix.sh, docs/testing.md).
. "$(dirname "$0")/lib.sh"
# Targets: 14 libraries (13 cells and the reconnect) and 6 servers.
FP_LIB_SERVERS=14 FP_REMOVE_SERVERS=6
. "$(dirname "$0")/matrix.sh"
crash_init fp_terminate
matrix_data
fp_step_matrix terminate claims
fp_reconnect_cell
fp_inventory_exact
log "PASS: failpoint matrix, backend terminated: 19 cells (7 with claims in flight or library dependents) and a reconnect exact"
