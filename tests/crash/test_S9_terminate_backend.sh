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

# --- prune of the first library: every third item unseen ---
q "CREATE TABLE crashtest.seen AS
   SELECT external_id FROM crashtest.before WHERE library_id = :'lib' AND id % 3 <> 0" -v lib="$lib"
seen=$(q "SELECT count(*) FROM crashtest.seen")
job=$(seen_prune_job "$lib")
want_deleted=$(q "SELECT count(*) FROM crashtest.before WHERE library_id = :'lib' AND id % 3 = 0" -v lib="$lib")

terminate_rounds "$job" $((want_deleted / 128 + 2))
check_replay "$job"
resume "$job"
prune_exact "$job" "$lib" "$want_deleted" "$seen" "id % 3 = 0"
log "prune job $job exact after $TERMS terminations"

# --- remove-server of server 2 ---
want=$(q "SELECT count(*) FROM crashtest.before WHERE server_id = :'s'" -v s="$s2")
job=$(job_create remove-server "$s2")
terminate_rounds "$job" $((want / 128 + 5))
resume "$job"
remove_server_exact "$job" "$s2" "$want" 2 "$lib" "id % 3 = 0"
log "PASS: remove-server job $job exact after $TERMS terminations"
