#!/bin/bash
# S7, S9 (then S3, S6, S8 on the final state): `cleanupctl job run` of a
# prune job is killed with SIGKILL at random moments, many times, each time
# resumed by a new process on a new connection. After every kill the job is
# at its last committed step; at the end every unseen item is deleted once,
# every seen item kept, the counters equal the ground truth computed before
# the run, admission is open again and replaying each step changes nothing.
# make soak only (exit 77, skipped, unless CLEANUP_CRASH_ROUNDS is set): the
# kills fall at random moments; test_FP_*.sh hit the same invariants at
# named failpoints, deterministically, in make test.
. "$(dirname "$0")/lib.sh"
soak_only
crash_init kill9_prune

# Two servers of two libraries; the target is the first library. About 60%
# of its items were seen, in an irregular pattern, plus IDs the library
# does not hold.
q "SELECT cleanup_lab.seed_demo(2, 2, ${CRASH_PRUNE_ITEMS:-$(scaled 20000)})" >/dev/null
lib=$(q "SELECT min(id) FROM inventory.libraries")
snapshot before
q "CREATE TABLE crashtest.seen AS
   SELECT external_id FROM crashtest.before WHERE library_id = :'lib' AND (id * 7919) % 10 < 6
   UNION ALL SELECT 'absent-' || g FROM generate_series(1, 300) g" -v lib="$lib"
seen=$(q "SELECT count(*) FROM crashtest.seen")

job=$(job_create prune "$lib")
q "SELECT external_id FROM crashtest.seen ORDER BY md5(external_id)" |
	"$CLEANUPCTL" --db "$CONN" --quiet job append "$job" >/dev/null
"$CLEANUPCTL" --db "$CONN" --quiet job seal "$job" --expected "$seen" >/dev/null

# Ground truth, from the snapshot and the manifest, before any step.
read -r want_deleted want_kept want_examined < <(q "
	SELECT count(*) FILTER (WHERE s.external_id IS NULL), count(*) FILTER (WHERE s.external_id IS NOT NULL), count(*)
	  FROM crashtest.before b LEFT JOIN crashtest.seen s USING (external_id)
	 WHERE b.library_id = :'lib'" -v lib="$lib" | tr '|' ' ')
log "job $job: $want_examined items, $want_deleted unseen, $want_kept seen"

# A step visits up to 128 unseen items (examining up to 1024 rows).
kill9_rounds "$job" $((want_deleted / 128 + 3))
# Replay after the crashes, before resuming: recorded results, no change.
check_replay "$job"
resume "$job"
check_consistent "$job" "after resume"

assert_eq "$(job_field "$job" phase)" completed "phase"
assert_eq "$(job_field "$job" deleted)" "$want_deleted" "deleted"
assert_eq "$(job_field "$job" kept)" "$want_kept" "kept"
assert_eq "$(job_field "$job" examined)" "$want_examined" "examined"
assert_eq "$(job_field "$job" visited)" "$want_deleted" "visited (candidates)"
assert_eq "$(job_field "$job" "moved + absent + retained")" 0 "moved + absent + retained"
# The target holds exactly its seen items; everything else is untouched.
assert_eq "$(q "SELECT count(*) FROM (
	(SELECT id FROM inventory.items WHERE library_id = :'lib'
	 EXCEPT SELECT b.id FROM crashtest.before b JOIN crashtest.seen s USING (external_id) WHERE b.library_id = :'lib')
	UNION ALL
	(SELECT b.id FROM crashtest.before b JOIN crashtest.seen s USING (external_id) WHERE b.library_id = :'lib'
	 EXCEPT SELECT id FROM inventory.items WHERE library_id = :'lib')) d" -v lib="$lib")" 0 \
	"rows of the target differing from its seen items"
assert_eq "$(q "SELECT count(*) FROM (
	(SELECT id, library_id, external_id FROM inventory.items WHERE library_id <> :'lib'
	 EXCEPT SELECT id, library_id, external_id FROM crashtest.before WHERE library_id <> :'lib')
	UNION ALL
	(SELECT id, library_id, external_id FROM crashtest.before WHERE library_id <> :'lib'
	 EXCEPT SELECT id, library_id, external_id FROM inventory.items WHERE library_id <> :'lib')) d" -v lib="$lib")" 0 \
	"rows of other libraries changed"
assert_eq "$(q "SELECT sum(item_count) FROM cleanup.library_stats WHERE library_id = :'lib'" -v lib="$lib")" \
	"$want_kept" "library_stats item count of the target"
assert_eq "$(q "SELECT state FROM cleanup.library_admission WHERE library_id = :'lib'" -v lib="$lib")" open \
	"admission of the target after completion"
check_replay "$job"
log "PASS: $KILLS kills, job $job exact"
