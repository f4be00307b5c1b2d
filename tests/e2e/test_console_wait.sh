# One retry rule and one success wording under both front ends.
# The console's :wait N retries a busy answer as the CLI's --wait N does
# (the operation layer's tui_op_wait): without it a pause of a job whose
# row another session holds answers busy at once; with :wait 1 it retries
# and then the busy answer stands, saying "still busy after :wait 1 s";
# with :wait 60 the footer says "busy, retrying (N s left ...)" while the
# clock goes on, and once the holder goes the pause succeeds in the CLI's
# words ("paused job N: prune of library 1 (Movies), phase paused"). The
# row lock (lib.sh's blocker) is observed in pg_stat_activity, never slept
# for.
. "$(dirname "$0")/lib.sh"

db_fresh wait
J=$("$CLEANUPCTL" --json --db "$DB" job create prune --library 1 | jq -r .id)
[ "$J" -gt 0 ] 2>/dev/null || fail "job create: $J"
blocker_start "$J" # lib.sh: its row held FOR UPDATE until blocker_stop
# The CLI, for comparison: busy at once, exit 3.
"$CLEANUPCTL" --db "$DB" job pause "$J" >/dev/null 2>"$E2E_TMP/cli.err"
[ $? = 3 ] && grep -q "busy, retry later: " "$E2E_TMP/cli.err" && ok "the CLI answers busy at once (exit 3)" ||
	fail "CLI: $(cat "$E2E_TMP/cli.err")"

start "$CLEANUPCTL"
wait_re " +$J prune +lib 1 Movies +collecting" || fail "the job is not shown"

# pause_job: :pause J, answered y.
pause_job() {
	keys :
	type_text "pause $J"
	keys Enter
	wait_for "Pause collecting job $J?" || fail "no pause dialog"
	keys y
}

# :wait 0 (the default): busy at once, as the CLI.
pause_job
wait_for "pause job $J: busy, retry later: " 10 && ok "without :wait the busy answer comes at once" ||
	fail "no busy answer"
grab
seen_text "retrying" && fail "it retried without :wait"

# The console's seconds follow the CLI's rule (digits, an optional fraction).
keys :
type_text "wait 1e1"
keys Enter
wait_for "wait takes seconds from 0 to 86400, not \"1e1\": a decimal number of seconds" &&
	ok ":wait 1e1 refused as --wait 1e1 is" || fail ":wait 1e1"
keys :
type_text "throttle +2"
keys Enter
wait_for "throttle takes 0 (none) or steps a second from 0.1 to 1000, not \"+2\": a decimal number" &&
	ok ":throttle +2 refused as --max-rate +2 is" || fail ":throttle +2"

# :wait 1: retried for a second, then the busy answer stands and says so.
keys :
type_text "wait 1"
keys Enter
wait_for "a busy answer is retried for up to 1 s" || fail ":wait 1 not taken"
pause_job
wait_for "still busy after :wait 1 s (" 15 && ok ":wait 1: retried, then the busy answer stands, saying so" ||
	fail "no still-busy note"
[ "$(sql "SELECT phase FROM cleanup.jobs WHERE id = $J")" = collecting ] || fail "the job changed while busy"

# :wait 60: the footer says it is retrying and how long is left; the clock
# goes on; once the holder goes the pause succeeds in the CLI's words.
keys :
type_text "wait 60"
keys Enter
wait_for "a busy answer is retried for up to 60 s" || fail ":wait 60 not taken"
pause_job
wait_re "pause job $J: busy, retrying \([0-9]+ s left, attempt [0-9]+; t stops\)" 15 &&
	ok "the footer says busy, retrying (N s left)" || fail "no retrying footer"
clock1=$(head -1 <<<"$SCREEN" | grep -oE "[0-9]{2}:[0-9]{2}:[0-9]{2}" | head -1)
until_seen 10 eval '[ "$(head -1 <<<"$SCREEN" | grep -oE "[0-9]{2}:[0-9]{2}:[0-9]{2}" | head -1)" != "$clock1" ]' &&
	ok "the clock goes on while the action retries" || fail "the console waited with its action"
capture console-wait-retrying
blocker_stop
wait_for "paused job $J: prune of library 1 (Movies), phase paused, step 0" 30 &&
	ok "the pause succeeds once the lock goes, in the CLI's words" || fail "no success after the lock went"
[ "$(sql "SELECT phase FROM cleanup.jobs WHERE id = $J")" = paused ] || fail "the job is not paused"
# The CLI's success line is the same words.
"$CLEANUPCTL" --db "$DB" job resume "$J" >"$E2E_TMP/cli.out" 2>&1
grep -qx "resumed job $J: prune of library 1 (Movies), phase collecting, step 0" "$E2E_TMP/cli.out" &&
	ok "the CLI's resume reads the same way" || fail "CLI: $(cat "$E2E_TMP/cli.out")"
quit_console && ok "q quits" || fail "quit"
finish
