#!/bin/bash
# S7, S9: the backend of `cleanupctl job run` is terminated
# (pg_terminate_backend, found by its application_name
# cleanupctl:job:<id>:run) mid-step, many times: held between discovery and
# deletion by the engine's test hook, and at random moments. Each time the
# CLI exits 1 (connection lost), the job is at its last committed step, and
# a step stopped mid-way leaves no trace. Then a new process resumes; the
# final state equals the ground truth exactly, for a prune job and for a
# remove-server job.
# make soak only (exit 77, skipped, unless CLEANUP_CRASH_ROUNDS is set): the
# kills fall at random moments; test_FP_*.sh hit the same invariants at
# named failpoints, deterministically, in make test.
. "$(dirname "$0")/lib.sh"
soak_only
crash_init terminate

q "SELECT cleanup_lab.seed_demo(3, 2, ${CRASH_TERMINATE_ITEMS:-$(scaled 25000)})" >/dev/null
read -r s1 s2 s3 < <(q "SELECT string_agg(id::text, ' ' ORDER BY id) FROM inventory.media_servers")
lib=$(q "SELECT min(id) FROM inventory.libraries WHERE server_id = :'s'" -v s="$s1")
snapshot before

# replay_resume JOB: the steps recorded so far replay, then a new process
# resumes JOB.
replay_resume() {
	check_replay "$1"
	resume "$1"
}

# --- prune of the first library: every third item unseen ---
prune_soak "$lib" "id % 3 = 0" terminate_rounds replay_resume
log "prune job $job exact after $TERMS terminations"

# --- remove-server of server 2 ---
remove_server_soak "$s2" "$lib" "id % 3 = 0" terminate_rounds resume
log "PASS: remove-server job $job exact after $TERMS terminations"
