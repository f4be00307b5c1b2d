#!/bin/bash
# cleanupctl purge (docs/scaling.md): the retention of
# finished jobs' manifests, retained rows and step records, and of old
# events, through the real binary.
#  - only completed or cancelled jobs that finished at least --older-than
#    days ago are touched; an unfinished job's manifest is never;
#  - every transaction deletes at most --batch rows; --max-rows stops a run
#    and the next run goes on where it stopped;
#  - a purged job keeps its row and counters and says when it was purged
#    (purged_at in job show --json); an event and an audit row say so;
#  - --dry-run changes nothing; bad values exit 2 naming the value and the
#    rule, with nothing changed; a job row another session holds is skipped
#    (SKIP LOCKED), not waited for; a console login may not purge.
. "$(dirname "$0")/lib_foundation.sh"

db_fresh cleanup_lab_t_cli_purge
sql "SELECT cleanup_lab.seed_demo(4, 2, 60)" >/dev/null
# Servers 1-4, libraries 1-8 (two each), 60 items each.

# Job A: a prune of library 1 with a manifest of 20 IDs, run to the end.
run --json job create prune --library 1
expect 0
A=$(jq -r .id <<<"$OUT")
sql "SELECT external_id FROM inventory.items WHERE library_id = 1 ORDER BY id LIMIT 20" >"$TMPD/ids"
run_in "$TMPD/ids" job append "$A"
expect 0
run job seal "$A" --expected 20
expect 0
run job run "$A"
expect 0 "completed"
# Job B: removal of library 3 (server 2), completed.
run --json job create remove-library --library 3
B=$(jq -r .id <<<"$OUT")
run job run "$B"
expect 0 "completed"
# Job C: a prune of library 5 (server 3), cancelled while collecting.
run --json job create prune --library 5
C=$(jq -r .id <<<"$OUT")
run_in "$TMPD/ids" job append "$C"
run job cancel "$C"
expect 0
# Job D: a prune of library 7 (server 4), sealed, not run: unfinished.
run --json job create prune --library 7
D=$(jq -r .id <<<"$OUT")
sql "SELECT external_id FROM inventory.items WHERE library_id = 7 ORDER BY id LIMIT 30" >"$TMPD/ids7"
run_in "$TMPD/ids7" job append "$D"
run job seal "$D" --expected 30
expect 0

steps_of() { sql "SELECT count(*) FROM cleanup.job_steps WHERE job_id = $1"; }
manifest_of() { sql "SELECT count(*) FROM cleanup.manifest WHERE job_id = $1"; }
same "$(manifest_of "$A")" 20 "job A has its manifest"
[ "$(steps_of "$A")" -ge 2 ] || fail "job A has no step records"

CURRENT="bad values: exit 2, nothing changed"
before=$(fingerprint)
for args in "--older-than -1" "--older-than abc" "--older-than 36501" "--batch 0" "--batch 10001" "--max-rows 0" \
	"--older-than 1.5" "--bogus"; do
	# shellcheck disable=SC2086
	run purge $args
	expect 2
done
run purge --batch 0
expect 2 "--batch" "\"0\""
run purge --older-than -1
expect 2 "--older-than"
unchanged "$before"

CURRENT="nothing old enough: the default age (30 days) purges nothing"
run --json purge --dry-run
expect 0
same "$(jq -r '.jobs_total' <<<"$OUT")" 0 "dry run: no job older than 30 days"
run --json purge
expect 0
same "$(jq -r '[.jobs_total, .rows] | @csv' <<<"$OUT")" "0,0" "purge of nothing"
same "$(manifest_of "$A")" 20 "job A's manifest kept"

CURRENT="--dry-run lists every finished job and changes nothing"
before=$(fingerprint)
run --json purge --dry-run --older-than 0
expect 0
same "$(jq -r '[.jobs[].job_id] | join(",")' <<<"$OUT")" "$A,$B,$C" "the three finished jobs, oldest first"
same "$(jq -r ".jobs[] | select(.job_id == $A) | [.manifest, .phase] | @csv" <<<"$OUT")" '20,"completed"' \
	"job A's manifest count and phase"
same "$(jq -r '.dry_run' <<<"$OUT")" true "dry_run is true"
run purge --dry-run --older-than 0
expect 0 "would purge job $A" "nothing was changed"
unchanged "$before"

CURRENT="a job finished 40 days ago goes with the default age; younger ones stay"
sql "UPDATE cleanup.jobs SET finished_at = now() - interval '40 days' WHERE id = $A" >/dev/null
sql "INSERT INTO cleanup.events (at, kind, message) VALUES (now() - interval '41 days', 'note', 'old event'),
                                                          (now() - interval '41 days', 'note', 'old event')" >/dev/null
counters() { sql "SELECT concat_ws(',', phase, step_no, deleted, kept, manifest_count) FROM cleanup.jobs WHERE id = $1"; }
ca=$(counters "$A")
run --json purge
expect 0
same "$(jq -r '[.jobs[].job_id] | join(",")' <<<"$OUT")" "$A" "only job A purged"
same "$(jq -r '.jobs[0] | [.manifest, .purged] | @csv' <<<"$OUT")" "20,true" "its 20 manifest IDs, purged"
same "$(jq -r '.events' <<<"$OUT")" 2 "the two 41-day-old events purged"
same "$(manifest_of "$A")" 0 "job A's manifest gone"
same "$(steps_of "$A")" 0 "job A's step records gone"
same "$(counters "$A")" "$ca" "job A's row and counters kept"
same "$(sql "SELECT purged_at IS NOT NULL FROM cleanup.jobs WHERE id = $A")" t "job A marked purged"
same "$(sql "SELECT count(*) FROM cleanup.events WHERE message = 'old event'")" 0 "old events gone"
[ "$(sql "SELECT count(*) FROM cleanup.events WHERE at > now() - interval '1 day'")" -gt 0 ] ||
	fail "recent events were purged too"
same "$(sql "SELECT count(*) FROM cleanup.events WHERE kind = 'purged' AND job_id = $A")" 1 "a 'purged' event for job A"
same "$(sql "SELECT outcome LIKE 'done: 1 finished job older than 30 days%' FROM cleanup.audit WHERE action = 'purge'
              ORDER BY id DESC LIMIT 1")" t "the run is audited"
[ "$(steps_of "$B")" -ge 1 ] || fail "job B (finished now) lost its step records"
run --json job show "$A"
expect 0
same "$(jq -r '[(.purged_at != null), (.steps | length)] | @csv' <<<"$OUT")" "true,0" \
	"job show: purged_at set, no step records"
run job show "$A"
expect 0 "manifest, retained rows and step records removed (cleanupctl purge)"

CURRENT="a job row held by another session is skipped, not waited for"
psql -X -q "$DB" -c "SET application_name = 't-purge-holder'" -c "BEGIN" \
	-c "SELECT 1 FROM cleanup.jobs WHERE id = $B FOR UPDATE" -c "SELECT pg_sleep(120)" >/dev/null 2>&1 &
HOLDER=$!
for _ in $(seq 1 400); do
	[ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
	           AND application_name = 't-purge-holder' AND wait_event = 'PgSleep'")" = 1 ] && break
	sleep 0.05
done
run --json purge --older-than 0 --batch 5 --max-rows 12
expect 0
same "$(jq -r '.stopped' <<<"$OUT")" "max-rows" "stopped at --max-rows"
same "$(jq -r '.rows' <<<"$OUT")" 12 "exactly 12 rows (transactions of at most 5, the last one cut to 2)"
same "$(jq -r '.transactions' <<<"$OUT")" 3 "three transactions"
same "$(jq -r '[.jobs[].job_id] | join(",")' <<<"$OUT")" "$C" "job B (held) skipped, job C worked on"
same "$(sql "SELECT purged_at IS NULL FROM cleanup.jobs WHERE id = $C")" t "job C only partly purged"
sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database()
      AND application_name = 't-purge-holder'" >/dev/null
wait "$HOLDER" 2>/dev/null

CURRENT="the next run goes on and finishes every finished job; the unfinished one is untouched"
run purge --older-than 0 --batch 7
expect 0 "purged job $C" "purged job $B" "purge done"
same "$(sql "SELECT string_agg(id::text, ',' ORDER BY id) FROM cleanup.jobs WHERE purged_at IS NOT NULL")" \
	"$A,$B,$C" "jobs A, B and C purged"
same "$(sql "SELECT count(*) FROM cleanup.manifest WHERE job_id IN ($A, $B, $C)")" 0 "no manifest row of a finished job"
same "$(sql "SELECT count(*) FROM cleanup.job_steps WHERE job_id IN ($A, $B, $C)")" 0 "no step record of a finished job"
same "$(manifest_of "$D")" 30 "the unfinished job's manifest kept"
same "$(sql "SELECT phase FROM cleanup.jobs WHERE id = $D")" "draining" "the unfinished job unchanged"
run job run "$D"
expect 0 "completed"
run --json purge --older-than 0
same "$(jq -r '[.jobs[].job_id] | join(",")' <<<"$OUT")" "$D" "job D purged once finished"

CURRENT="roles: a runner login may purge, a console login may not"
login_role t_cli_purge_runner cleanup_runner
login_role t_cli_purge_console cleanup_console
BASE=$DB
DB="$BASE user=t_cli_purge_console"
run purge --older-than 0
expect 1 "permission denied"
DB="$BASE user=t_cli_purge_runner"
run --json purge --older-than 0
expect 0
DB=$BASE

finish
