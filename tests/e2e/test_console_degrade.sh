# The console degrades instead of waiting when the database does not answer
# a refresh query: with cleanup.library_stats locked by another session,
# the servers and libraries queries time out after the refresh
# statement_timeout (2 s), their panels keep their rows marked "~stale",
# the header says which parts and since when, the rest of the console goes
# on (the clock, the other panels, the keys), and once the lock goes the
# marker goes too. The lock is observed with pg_locks, not slept for.
. "$(dirname "$0")/lib.sh"

db_fresh degrade

start "$CLEANUPCTL"
wait_re "│ +1 +1 Movies +open +300 counter" && ok "libraries shown" || fail "libraries not shown"
locker_start # lib.sh: cleanup.library_stats locked until locker_stop (also at exit)
wait_for "stale servers, libraries since" 15 && wait_for "database slow to answer" &&
	ok "the header names the parts that did not answer" || fail "no stale badge"
wait_re "libraries 1/4 ~stale" && wait_re "servers 1/2 ~stale" && ok "their panels say ~stale" || fail "panel titles"
grab
grep -qE "│ +1 +1 Movies +open +300 counter" <<<"$SCREEN" && ok "and keep their rows" || fail "rows gone"
grep -qE "jobs[^~]*┐" <<<"$SCREEN" && ! grep -q "jobs.*~stale" <<<"$SCREEN" && ok "the jobs panel is not stale" ||
	fail "jobs panel marked"
gone_text "reconnecting" && ok "the connection stays" || fail "the console reconnected"
keys BTab
wait_re "\[libraries 1/4 ~stale\]" 5 && ok "the keys still work" || fail "keys"
locker_stop
wait_gone "database slow to answer" 15 && wait_gone "~stale" && ok "the marker goes once the lock goes" ||
	fail "still stale"
quit_console && ok "q quits" || fail "quit"
finish
