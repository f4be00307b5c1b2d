# The console narrates its own connection in its log panel, as
# console notes ("console" column, "this console: ..."), never as audit
# rows: a part going stale because its refresh query hit the statement
# timeout (cleanup.library_stats locked by a psql session of this test)
# and coming back once the lock goes; the connection lost with the reason
# (pg_terminate_backend of the console's own backend, application_name
# 'cleanupctl:console' in this test's database only: tests run in parallel
# against one cluster), reconnecting, and reconnected after N s. Every
# wait observes the screen or the database (pg_locks, pg_stat_activity).
. "$(dirname "$0")/lib.sh"

db_fresh narrate
MONITOR_Q="SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'cleanupctl:console' AND backend_type = 'client backend'"

COLS=160 start "$CLEANUPCTL"
wait_re "│ +1 +1 Movies +open +300 counter" && ok "libraries shown" || fail "libraries not shown"
wait_sql "SELECT count(*) FROM ($MONITOR_Q) m" 1 || fail "the console's monitor is not connected"

# --- a part goes stale (statement timeout behind a lock) and comes back ---
locker_start # lib.sh: cleanup.library_stats locked until locker_stop (also at exit)
wait_for "this console: libraries stale: its refresh query hit the statement timeout (2 s" 15 &&
	ok "the log says which part went stale and why" || fail "no stale note for libraries"
wait_for "this console: servers stale: its refresh query hit the statement timeout" 5 &&
	ok "each part that went stale is named" || fail "no stale note for servers"
grab
grep -qE "[0-9:]{8} console +this console: libraries stale" <<<"$SCREEN" &&
	ok "the note is the console's (the log's console column)" || fail "not marked as the console's"
capture console-narrate-1-stale
locker_stop
wait_re "this console: libraries current again \(its rows were stale for [0-9]+ s\)" 15 && wait_for "this console: servers current again" &&
	ok "the parts coming back are narrated" || fail "no note for the parts coming back"

# --- the connection lost, reconnecting, reconnected -------------------------
OLD=$(sql "$MONITOR_Q")
[ -n "$OLD" ] || fail "no monitor backend"
sql "SELECT pg_terminate_backend(pid) FROM ($MONITOR_Q) m" >/dev/null
wait_re "this console: connection lost \((SQLSTATE 57P01: )?(terminating connection due to administrator command|server closed the connection unexpectedly)\); the panels show the rows of [0-9:]{8}" 15 &&
	ok "the loss is narrated with the reason" || fail "the loss is not narrated"
wait_for "this console: reconnecting (attempt 1)" 15 && ok "the reconnect attempt is narrated" ||
	fail "reconnecting not narrated"
wait_re "this console: reconnected after [0-9]+ s \(backend [0-9]+\); the panels are current again" 20 &&
	ok "the reconnect is narrated with how long it took" || fail "reconnected not narrated"
NEW=$(sql "$MONITOR_Q")
[ -n "$NEW" ] && [ "$NEW" != "$OLD" ] && grep -qF "(backend $NEW)" <<<"$FLAT" &&
	ok "on a new backend ($OLD, then $NEW), named in the note" || fail "backend: old $OLD, new $NEW"
capture console-narrate-2-reconnected
# Newest first: reconnected above reconnecting above lost.
grab
order=$(grep -oE "this console: (connection lost|reconnecting \(attempt 1\)|reconnected after)" <<<"$SCREEN" |
	sed 's/this console: //; s/ (attempt 1)//; s/ after//' | tr '\n' ',')
[ "$order" = "reconnected,reconnecting,connection lost," ] && ok "in order, newest first" || fail "order: $order"
# Not audit rows: nothing of this is in cleanup.audit.
[ "$(sql "SELECT count(*) FROM cleanup.audit WHERE outcome LIKE '%this console%'")" = 0 ] &&
	ok "no audit row for the console's own notes" || fail "console notes were audited"
quit_console && ok "q quits" || fail "quit"
finish
