# `cleanupctl demo server-crash`, followed from the
# console alone. On a sandbox of this test's own (the demo stops its
# server; the shared one serves the tests beside this one): a runner at one
# step a second; after its third step the demo stops PostgreSQL immediately
# (SIGQUIT to the postmaster, as pg_ctl stop -m immediate), narrated in the
# log; the header says "stale since" while it is down; the server starts
# again, the console reconnects by itself, the log says at which step the
# job stayed (its last committed one, asynchronous commit said) and the
# console narrates the lost runner; r resumes it at the next step; the
# completion is narrated with counters that match the database. Every wait
# observes the screen or the database.
. "$(dirname "$0")/lib.sh"

private_sandbox demo_crash 3000
ITEMS=$(sql "SELECT count(*) FROM inventory.items WHERE library_id = 1")
[ "$ITEMS" = 3000 ] || fail "seeded library 1 holds $ITEMS items"

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
[ "$rc" = 0 ] && grep -q "demo server-crash: job 1 is run by" "$E2E_TMP/err" &&
	[ "$(sql "SELECT pg_postmaster_start_time()")" = "$PM" ] &&
	ok "demo server-crash off a terminal: narration and status, no crash" ||
	fail "off a terminal: $rc $(cat "$E2E_TMP/err")"
J=$(sql "SELECT id FROM cleanup.jobs WHERE phase = 'draining'")
[ "$J" = 1 ] || fail "the demo job: \"$J\""

demo_console "demo server-crash: job $J is run by" 1 "env CLEANUP_SANDBOX_DIR='$PRIVATE_SANDBOX' '$CLEANUPCTL' demo server-crash"
# The stop and the restart come from the demo's conductor as audit rows.
wait_for "job $J committed step" 30 && wait_for "stopping the server (immediate) in 2 s, for 3 s" &&
	ok "the stop is narrated as it happens" || fail "the stop is not narrated"
header_stale() { head -1 <<<"$SCREEN" | grep -qE "stale since [0-9:]+: reconnecting"; }
header_fresh() { ! header_stale; }
until_seen 20 header_stale && ok "the header says stale since, reconnecting" ||
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
	wait_for "asynchronous commit lost nothing: a lost step is done again" &&
		ok "asynchronous commit is said (nothing lost this time)" || fail "asynchronous commit not said"
fi
until_seen 30 header_fresh && ok "the console reconnected by itself" || fail "still stale: $(head -1 <<<"$SCREEN")"
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
wait_dialog "Type \"prune 1 Movies\"" || fail "run dialog"
type_text "prune 1 Movies"
keys Enter
wait_for "demo: job $J resumed at step $((KEPT + 1)) by backend" 15 &&
	ok "the resume is narrated, at the step after the last committed one" || fail "the resume is not narrated"
demo_completed "$J" "the console's run"
capture demo-server-crash-3-done
# Exact across the crash: each item of library 1 outside the manifest
# deleted once, the steps' deletions adding up to the job's.
demo_counters_exact "$J" 1 "$ITEMS"
demo_quit
finish
