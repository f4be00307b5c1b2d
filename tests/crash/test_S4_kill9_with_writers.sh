#!/bin/bash
# S4, A3, A6 under crashes: while sync writers insert and update in other
# libraries of the same server and of another server, and move items out of
# the draining target into another library, `cleanupctl job run` of a prune
# job is killed with SIGKILL many times and resumed. Moves are counted as
# moves, never as deletions, and the moved items survive; a move while a
# step is in flight is answered busy (55P03) at once, never made to wait;
# no write outside the target is rejected; the target ends with exactly its seen items that
# did not move; the deletion counter equals the unseen items that did not
# move, each deleted once.
# make soak only (exit 77, skipped, unless CLEANUP_CRASH_ROUNDS is set): the
# kills fall at random moments; test_FP_*.sh hit the same invariants at
# named failpoints, deterministically, in make test.
. "$(dirname "$0")/lib.sh"
soak_only
crash_init writers

q "SELECT cleanup_lab.seed_demo(2, 3, ${CRASH_WRITERS_ITEMS:-$(scaled 25000)})" >/dev/null
read -r s1 s2 < <(q "SELECT string_agg(id::text, ' ' ORDER BY id) FROM inventory.media_servers")
read -r lib dest other < <(q "SELECT string_agg(id::text, ' ' ORDER BY id) FROM inventory.libraries WHERE server_id = :'s'" \
	-v s="$s1")
far=$(q "SELECT min(id) FROM inventory.libraries WHERE server_id = :'s'" -v s="$s2")
snapshot before
q "CREATE TABLE crashtest.seen AS SELECT external_id FROM crashtest.before WHERE library_id = :'lib' AND id % 2 = 0;
   CREATE TABLE crashtest.moved (id bigint PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp())" -v lib="$lib"
job=$(seen_prune_job "$lib")

# move_sql ID: moves item ID out of the target into DEST and logs it in the
# same statement (so the log is exactly the moves that committed).
move_sql() {
	printf "WITH m AS (UPDATE inventory.items SET library_id = %s, updated_at = now() WHERE id = %s AND library_id = %s RETURNING id)\n  INSERT INTO crashtest.moved (id) SELECT id FROM m;\n" \
		"$dest" "$1" "$lib"
}

# --- a move never waits for a step, and one made ahead of the steps is
# counted as a move (S4, T7) ---
# The first step is held between discovery and its re-read (test hook).
# A writer moving unseen rows of that step's window out is refused at once
# (55P03, busy, naming the step: writers never wait for cleanup), and
# nothing moves. Once the step has committed, the writer moves unseen rows
# the steps have not reached yet: they are recorded as the job's
# departures, the next step counts them as moved, and none is deleted.
hook_hold
PGOPTIONS='-c cleanup.test_hook=after_discovery' start_run "$job" --max-steps 1
pid=$(blocked_runner "$job")
[ -n "$pid" ] || fail "the first step was not held at the hook"
picked=$(q "SELECT string_agg(id::text, ' ') FROM (
              SELECT id FROM (SELECT id FROM inventory.items WHERE library_id = :'lib' ORDER BY id LIMIT 128) w
               WHERE id % 2 = 1 AND id % 5 = 0) p" -v lib="$lib")
# move_ids IDS: one statement moving IDS out of the target (the writer
# holds all of them at once), logged in crashtest.moved; its stderr in
# $CRASH_TMP/mover.err.
move_ids() {
	PGAPPNAME=crash-mover psql -X -q -v ON_ERROR_STOP=1 -v ids="{${1// /,}}" -v lib="$lib" -v dest="$dest" \
		"$CONN" >/dev/null 2>"$CRASH_TMP/mover.err" <<'SQL'
WITH m AS (UPDATE inventory.items SET library_id = :'dest', updated_at = now()
            WHERE id = ANY (:'ids'::bigint[]) AND library_id = :'lib' RETURNING id)
INSERT INTO crashtest.moved (id) SELECT id FROM m;
SQL
}
if move_ids "$picked"; then
	fail "a move out of the window of a step in flight was not refused"
fi
grep -q "a step of cleanup job $job is running in library $lib; retry later" "$CRASH_TMP/mover.err" &&
	grep -q "held by pid $pid" "$CRASH_TMP/mover.err" ||
	{ cat "$CRASH_TMP/mover.err" >&2; fail "the refused move does not name the step (pid $pid)"; }
assert_eq "$(q "SELECT count(*) FROM crashtest.moved")" 0 "moves committed while the step was in flight"
hook_release
wait_run
assert_eq "$RUN_RC" 0 "exit of the held step once released"
# Unseen rows beyond the job's cursor, which no step has examined yet.
picked=$(q "SELECT string_agg(i.id::text, ' ') FROM (
              SELECT i.id FROM inventory.items i, cleanup.jobs j
               WHERE j.id = :'job' AND i.library_id = :'lib' AND i.id % 2 = 1 AND i.id % 5 = 0
                 AND i.id <= j.high_water_id
                 AND CASE WHEN j.key_cursor IS NOT NULL THEN i.external_id > j.key_cursor
                          ELSE (i.library_id, i.id) > (j.cursor_library_id, j.cursor_id) END
               ORDER BY i.id LIMIT 20) i" -v job="$job" -v lib="$lib")
npicked=$(wc -w <<<"$picked")
[ "$npicked" -gt 0 ] || fail "no unseen row left beyond the cursor to move"
move_ids "$picked" || { cat "$CRASH_TMP/mover.err" >&2; fail "the moves ahead of the steps failed"; }
assert_eq "$(q "SELECT count(*) FROM crashtest.moved")" "$npicked" "moves committed"
assert_eq "$(q "SELECT count(*) FROM cleanup.job_departures WHERE job_id = :'job' AND kind = 'moved'" -v job="$job")" \
	"$npicked" "moves recorded as the job's departures"
start_run "$job" --max-steps 1
wait_run
assert_eq "$RUN_RC" 0 "exit of the step after the moves"
assert_eq "$(q "SELECT moved FROM cleanup.job_steps WHERE job_id = :'job' AND step_no = 2" -v job="$job")" \
	"$npicked" "moves counted by the next step"
assert_eq "$(q "SELECT count(*) FROM inventory.items WHERE id IN (SELECT id FROM crashtest.moved) AND library_id = :'d'" \
	-v d="$dest")" "$npicked" "moved rows alive in their new library"
log "a move during a step: refused busy naming it; $npicked moves ahead of the steps counted as moves by step 2"

# --- writers: a script of moves, inserts and updates, paced ---
min=$(q "SELECT min(id) FROM crashtest.before WHERE library_id = :'lib'" -v lib="$lib")
max=$(q "SELECT max(id) FROM crashtest.before WHERE library_id = :'lib'" -v lib="$lib")
omin=$(q "SELECT min(id) FROM crashtest.before WHERE library_id = :'o'" -v o="$other")
script=$CRASH_TMP/writer.sql
{
	echo "\\set ON_ERROR_STOP 0"
	for ((k = 1; k <= ${CRASH_WRITER_OPS:-4000}; k++)); do
		move_sql $((min + (RANDOM * 32768 + RANDOM) % (max - min + 1)))
		printf "INSERT INTO inventory.items (library_id, external_id) VALUES (%s, 'w-%s');\n" "$((k % 2 ? dest : far))" "$k"
		printf "UPDATE inventory.items SET title = 'w %s', updated_at = now() WHERE id = %s;\n" "$k" $((omin + k % 1000))
		echo "SELECT pg_sleep(0.002);"
	done
} >"$script"
base=$(q "SELECT count(*) FROM crashtest.moved")
PGAPPNAME=crash-writer psql -X -q "$CONN" -f "$script" >/dev/null 2>"$CRASH_TMP/writer.err" &
WRITER_PID=$!
CRASH_BG_PIDS+=("$WRITER_PID")
wait_for "SELECT count(*) > :'base' FROM crashtest.moved" t "the writer's first move" -v base="$base"

kill9_rounds "$job" $((${CRASH_WRITERS_ITEMS:-$(scaled 25000)} / 256 + 3))
resume "$job"
# Stop the writer; the statement in flight commits whole or not at all.
kill "$WRITER_PID" 2>/dev/null || true
wait "$WRITER_PID" 2>/dev/null || true
wait_for "SELECT count(*) FROM crashtest.activity WHERE application_name = 'crash-writer'" 0 "the writer to end"
check_consistent "$job" "after resume"

# Writes outside the target are never refused (A6). A move out of the
# target while a step of the job is in flight is busy (55P03, retry later:
# writers never wait for cleanup) and moves nothing; any other refusal is
# a failure.
busy=$(grep -c "ERROR:  a step of cleanup job $job is running in library $lib; retry later" "$CRASH_TMP/writer.err" || true)
errors=$(grep ERROR "$CRASH_TMP/writer.err" | grep -vc "ERROR:  a step of cleanup job $job is running in library $lib; retry later" || true)
[ "$errors" -eq 0 ] || { grep ERROR "$CRASH_TMP/writer.err" | grep -v "is running in library" | head -5 >&2; fail "$errors writer statements were rejected"; }
log "writer: $busy moves answered busy (a step in flight), none refused otherwise"
moves=$(q "SELECT count(*) FROM crashtest.moved")
log "writer: $moves moves committed; job moved $(job_field "$job" moved), retained $(job_field "$job" retained)"

assert_eq "$(job_field "$job" phase)" completed "phase"
# Every moved item survives, in the library it moved to.
assert_eq "$(q "SELECT count(*) FROM crashtest.moved m LEFT JOIN inventory.items i USING (id)
                 WHERE i.library_id IS DISTINCT FROM :'d'" -v d="$dest")" 0 "moved items not in their new library"
# The target holds exactly its seen items that did not move.
assert_eq "$(q "SELECT count(*) FROM (
	(SELECT id FROM inventory.items WHERE library_id = :'lib'
	 EXCEPT SELECT b.id FROM crashtest.before b JOIN crashtest.seen USING (external_id)
	         WHERE b.library_id = :'lib' AND b.id NOT IN (SELECT id FROM crashtest.moved))
	UNION ALL
	(SELECT b.id FROM crashtest.before b JOIN crashtest.seen USING (external_id)
	  WHERE b.library_id = :'lib' AND b.id NOT IN (SELECT id FROM crashtest.moved)
	 EXCEPT SELECT id FROM inventory.items WHERE library_id = :'lib')) d" -v lib="$lib")" 0 \
	"rows of the target differing from its seen, unmoved items"
# Deleted: exactly the unseen items that did not move, counted once each.
want_deleted=$(q "SELECT count(*) FROM crashtest.before b
                   WHERE b.library_id = :'lib' AND b.external_id NOT IN (SELECT external_id FROM crashtest.seen)
                     AND b.id NOT IN (SELECT id FROM crashtest.moved)" -v lib="$lib")
assert_eq "$(job_field "$job" deleted)" "$want_deleted" "deleted"
assert_eq "$(q "SELECT count(*) FROM crashtest.before b LEFT JOIN inventory.items i USING (id)
                 WHERE i.id IS NULL AND b.library_id <> :'lib'" -v lib="$lib")" 0 "rows deleted outside the target"
# Moves the job saw are at most the moves that happened, and at least the
# ones made between a step's discovery and its re-read.
moved=$(job_field "$job" moved)
assert_le "$moved" "$moves" "moves counted by the job"
assert_le "$npicked" "$moved" "moves counted (at least those of step 1)"
# Writes outside the target all landed.
assert_eq "$(q "SELECT count(*) FROM inventory.items WHERE external_id LIKE 'w-%'")" \
	"$(q "SELECT count(*) FROM inventory.items WHERE external_id LIKE 'w-%' AND library_id IN (:'d', :'f')" \
		-v d="$dest" -v f="$far")" "writer inserts in the right libraries"
assert_eq "$(q "SELECT state FROM cleanup.library_admission WHERE library_id = :'lib'" -v lib="$lib")" open \
	"admission of the target after completion"
assert_eq "$(q "SELECT count(*) FROM inventory.items WHERE library_id = :'lib'" -v lib="$lib")" \
	"$(q "SELECT sum(item_count) FROM cleanup.library_stats WHERE library_id = :'lib'" -v lib="$lib")" \
	"library_stats of the target"
check_replay "$job"
log "PASS: $KILLS kills with writers; $moves moves preserved, $moved counted as moved, none deleted"
