# The dashboard shows the seeded servers, libraries and jobs; a change made
# by another process (psql) appears without a keypress (the periodic refresh
# is a minute here, so only the NOTIFY can bring it); help, the paused
# display (header clock still running) and + / - work. Both builds.
. "$(dirname "$0")/lib.sh"

# header_clock: the HH:MM:SS of the grabbed screen's header row.
header_clock() { head -1 <<<"$SCREEN" | grep -oE '[0-9]{2}:[0-9]{2}:[0-9]{2}'; }
# clock_moved_while_paused: the header shows a time other than $clock, and
# PAUSED (a test for until_seen).
clock_moved_while_paused() {
	local now
	now=$(header_clock)
	[ -n "$now" ] && [ "$now" != "$clock" ] && head -1 <<<"$SCREEN" | grep -q PAUSED
}

for BIN in "${BINARIES[@]}"; do
	fresh_for "$BIN" dash
	J1=$(sealed_job 1 100)
	J2=$("$CLEANUPCTL" --json --db "$DB" job create prune --library 3 | jq -r .id)
	start "$BIN" --refresh 60000

	wait_for "server-2" && wait_for "Shows" && ok "$name: servers and libraries shown" || fail "$name: servers/libraries"
	screen | grep -q "server-1 .*open .*600 .*$J1 draining" && ok "$name: server row with item count and active job" ||
		fail "$name: server-1 row"
	screen | grep -qE ">? +$J2 prune +lib 3 Movies +collecting" && ok "$name: collecting job row" || fail "$name: job $J2 row"
	screen | grep -qE " +$J1 prune +lib 1 Movies +draining .*0/300" && ok "$name: draining job with progress" ||
		fail "$name: job $J1 row"
	wait_for "cmdline: $name" 2 && ok "$name: header names the command-line backend" || fail "$name: backend"

	# Another process changes a job: visible through NOTIFY, no key pressed.
	sql "SELECT cleanup.job_transition($J2, 'pause')" >/dev/null
	wait_re "lib 3 Movies +paused" 5 && ok "$name: psql change appeared without a keypress" ||
		fail "$name: psql change not shown"

	keys '?'
	wait_for "refresh less / more often" && ok "$name: help lists the keys" || fail "$name: help"
	screen | grep -q "cancel the selected job" && ok "$name: help lists actions" || fail "$name: help actions"
	keys x # any key closes help and does nothing else
	wait_gone "refresh less / more often" && ok "$name: help closed" || fail "$name: help close"

	# p: the display freezes (PAUSED), the header clock keeps going.
	keys p
	wait_for "PAUSED" || fail "$name: PAUSED badge"
	sql "SELECT cleanup.job_transition($J2, 'resume')" >/dev/null
	grab
	clock=$(header_clock)
	[ -n "$clock" ] || fail "$name: no clock in the header: $(head -1 <<<"$SCREEN")"
	# A bounded wait (wall clock, scaled for loaded machines) for the header
	# to show another time while still PAUSED: no fixed number of polls.
	until_seen 10 clock_moved_while_paused && ok "$name: clock runs while paused" ||
		fail "$name: clock stopped (header still \"$(head -1 <<<"$SCREEN")\")"
	screen | grep -qE "lib 3 Movies +paused" && ok "$name: paused display keeps the old snapshot" ||
		fail "$name: paused display changed"
	keys p
	wait_re "lib 3 Movies +collecting" 5 && ok "$name: resumed display shows the change" || fail "$name: resume display"
	wait_gone "PAUSED" 2 || fail "$name: PAUSED stays"

	keys -
	wait_for "refresh 30s" && ok "$name: - shortens the interval" || fail "$name: -"
	keys +
	wait_for "refresh 60s" && ok "$name: + lengthens it" || fail "$name: +"

	# Enter opens the detail of the selected job; Esc returns.
	keys Enter
	wait_for "job $J2  prune of lib 3" && wait_for "manifest 0 IDs, not sealed" && ok "$name: detail opens" ||
		fail "$name: detail"
	keys Escape
	wait_for "servers" || fail "$name: back from detail"

	quit_console && ok "$name: q quits with 0" || fail "$name: quit"
done
finish
