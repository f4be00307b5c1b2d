# `cleanupctl demo server-crash`,
# followed from the console alone. On a sandbox of this test's own (the
# demo stops its server; the shared one serves the tests beside this one):
# a fresh job on a library of its own, a runner at one step a second; after
# its third step the demo holds the runner inside step 4 (a failpoint) and
# says "press F"; F (the presenter's key, the console's demo hook) stops
# PostgreSQL immediately (SIGQUIT to the postmaster, as pg_ctl stop -m
# immediate), narrated; the header says "stale since" while it is down;
# the server starts again, the console and the demo's writers reconnect by
# themselves (the writers write again: rows inserted after the restart,
# "reconnected" in their logs, narrated), the log says at which step the
# job stayed; r resumes it at the next step; the completion is narrated
# with counters that match the database. Every wait observes the screen or
# the database.
. "$(dirname "$0")/lib.sh"

private_sandbox demo_crash 300

# Refused on --db: the demo stops only the server of its own sandbox.
"$CLEANUPCTL" --db "$DB" demo server-crash </dev/null >"$E2E_TMP/out" 2>"$E2E_TMP/err"
rc=$?
[ "$rc" = 2 ] && grep -q "demo server-crash stops the server it runs on: it runs only on the demo's own sandbox" \
	"$E2E_TMP/err" && [ "$(sql "SELECT count(*) FROM cleanup.jobs")" = 0 ] &&
	ok "server-crash on --db: a usage error, nothing made" || fail "--db: $rc $(cat "$E2E_TMP/err")"

# Off a terminal: the narration and status, exit 0, the server untouched.
PM=$(sql "SELECT pg_postmaster_start_time()")
CLEANUP_SANDBOX_DIR="$PRIVATE_SANDBOX" "$CLEANUPCTL" demo server-crash </dev/null >"$E2E_TMP/out" 2>"$E2E_TMP/err"
rc=$?
[ "$rc" = 0 ] && grep -qE "demo server-crash: job 1 \(library [0-9]+, a fresh one\) is run by" "$E2E_TMP/err" &&
	[ "$(sql "SELECT pg_postmaster_start_time()")" = "$PM" ] &&
	ok "demo server-crash off a terminal: narration and status, no crash" ||
	fail "off a terminal: $rc $(cat "$E2E_TMP/err")"
[ "$(sql "SELECT string_agg(id || ':' || phase, ',') FROM cleanup.jobs")" = "1:draining" ] || fail "the off-terminal demo's job"

demo_console "demo server-crash: job 2 (library" 1 "env CLEANUP_SANDBOX_DIR='$PRIVATE_SANDBOX' '$CLEANUPCTL' demo server-crash"
J=2
read -r L ITEMS <<<"$(sql "SELECT library_id, scope_count FROM cleanup.jobs WHERE id = $J" | tr '|' ' ')"
[ "$ITEMS" = 1200 ] && [ "$L" != "$(sql "SELECT library_id FROM cleanup.jobs WHERE id = 1")" ] &&
	ok "a fresh job $J on a fresh library ($L, $ITEMS items)" || fail "job $J: library $L, $ITEMS items"
# The presenter's key: the demo waits for F with the runner held in step 4.
wait_for "press F: stop the server" 40 && wait_for "press F to stop the server (immediate)" && wait_for "for 3 s: step 4 is lost with it" &&
	ok "the demo waits for the presenter: press F" || fail "no \"press F\""
[ "$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")" = 3 ] && [ "$(sql "SELECT pg_postmaster_start_time()")" = "$PM" ] &&
	ok "nothing happens until F: step 3, the server untouched" || fail "before F: step $(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")"
IDMAX=$(sql "SELECT max(id) FROM inventory.items")
capture demo-server-crash-0-press-f
keys F
wait_for "F: stopping the server (immediate) now, for 3 s" 15 && ok "F: the stop is narrated as it happens" ||
	fail "the stop is not narrated"
header_stale() { head -1 <<<"$SCREEN" | grep -qE "stale since [0-9:]+: reconnecting"; }
header_fresh() { ! header_stale; }
# Stale: the header's badge, or (when the header gives its room to the NO
# RUNNER badge of the job the off-terminal run left) the console's log note.
stale_said() { header_stale || seen_text "this console: connection lost"; }
until_seen 20 stale_said && ok "the console says it is stale (header or log), reconnecting" ||
	fail "no stale marker: $(head -1 <<<"$SCREEN")"
capture demo-server-crash-1-stale
wait_for "server back (down " 60 && wait_for "r resumes job $J" && ok "the restart is narrated" ||
	fail "the restart is not narrated"
KEPT=$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")
SEEN=
wait_for "job $J stayed at step $KEPT, its last committed step (" &&
	SEEN=$(grep -oE "its last committed step \([0-9]+ seen\)" <<<"$FLAT" | grep -oE '[0-9]+') &&
	ok "the log says the job stayed at its last committed step ($KEPT; $SEEN seen before the stop)" ||
	fail "kept step $KEPT (seen $SEEN) not in the narration"
if [ -n "$SEEN" ] && [ "$KEPT" -lt "$SEEN" ]; then
	wait_for "acknowledged step" && wait_for "lost (asynchronous commit): done again" &&
		ok "the lost acknowledged steps are said" ||
		fail "lost steps not said"
else
	wait_for "asynchronous commit lost nothing; step $((KEPT + 1)), in flight, is done again" &&
		ok "asynchronous commit is said (nothing lost this time)" || fail "asynchronous commit not said"
fi
until_seen 30 header_fresh && ok "the console reconnected by itself" || fail "still stale: $(head -1 <<<"$SCREEN")"
# The demo's writers reconnected by themselves (backoff) and write again.
wait_for "writers back: 2 reconnected by" 40 && ok "the writers' return is narrated" || fail "the writers' return is not narrated"
wait_sql "SELECT count(*) > 0 FROM inventory.items WHERE id > $IDMAX" t 20 &&
	ok "the writers write again: rows inserted after the restart" || fail "no write after the restart"
[ "$(cat "$PRIVATE_SANDBOX"/log/writer-*.log | grep -c "reconnected: connected again after")" -ge 2 ] &&
	ok "each writer's log says it reconnected" || fail "writer logs: $(grep -h reconnect "$PRIVATE_SANDBOX"/log/writer-*.log)"
wait_for "demo: job $J lost its runner" 15 && wait_for "NO RUNNER for" &&
	ok "the runner that died with the server: NO RUNNER, narrated" || fail "the lost runner is not shown"
capture demo-server-crash-2-back
[ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'cleanupctl:job:$J:run'")" = 0 ] ||
	fail "a runner is still connected"

keys :
type_text "throttle 0"
keys Enter
wait_for "no throttle" || fail "throttle 0"
keys r
wait_dialog "Type \"prune $L Movies\"" || fail "run dialog"
type_text "prune $L Movies"
keys Enter
wait_for "demo: job $J resumed at step $((KEPT + 1)) by backend" 15 &&
	ok "the resume is narrated, at the step after the last committed one" || fail "the resume is not narrated"
demo_completed "$J" "the console's run"
capture demo-server-crash-3-done
# Exact across the crash: each item of library 1 outside the manifest
# deleted once, the steps' deletions adding up to the job's.
demo_counters_exact "$J" "$L" "$ITEMS"
demo_quit
finish
