#!/bin/bash
# S7, S9 at the runner's own failpoint after_commit (core/src/failpoint.c,
# CLEANUP_FAILPOINTS): `cleanupctl job run`, asynchronous commit and two
# steps in flight (its defaults), stops itself right after it was told a
# step committed and before it acts on the answer. It is then killed, its
# backend terminated, or the server crashed (`pg_ctl stop -m immediate`):
# steps it was told were committed asynchronously may be lost in a crash,
# but only whole, and a new process resumes to the exact ground truth, for
# a prune, a remove-library and a remove-server job. A parent-deleting step
# commits synchronously: the runner told of it, the crash never takes it
# back. The crashes need a server of their own: a private sandbox.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/matrix.sh"
private_sandbox fp_async
crash_init fp_after_commit
matrix_data
for kind in prune remove-library remove-server; do
	for kill in kill9 terminate immediate; do
		fp_after_commit_cell "$kind" "$kill"
	done
done
fp_sync_commit_cell remove-library
fp_sync_commit_cell remove-server
log "PASS: failpoint after_commit: 9 cells and 2 synchronous parent deletes exact"
