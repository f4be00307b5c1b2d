# At 80x24, the documented minimum, nothing is cut off for
# good: the footer shows every action key (short labels), the help says
# which of its rows are shown and scrolls down to the last action (D) and
# the commands; any other key still closes it. At 160 columns the jobs
# panel keeps its counters (the two-column layout used to drop them).
# Both builds.
. "$(dirname "$0")/lib.sh"

for BIN in "${BINARIES[@]}"; do
	fresh_for "$BIN" small
	J=$(sealed_job 1 100)
	COLS=80 ROWS=24 start "$BIN"
	wait_for "draining" || fail "$name: job not shown at 80x24"
	wait_re "t stop .*S seal .*v preview .*D remove" && ok "$name: footer at 80 columns shows every action key" ||
		fail "$name: footer cut: $(tail -1 <<<"$SCREEN")"

	keys '?'
	wait_re "keys 1-[0-9]+/[0-9]+ " && ok "$name: help title says which rows are shown" || fail "$name: help title"
	gone_text "remove the selected library or server" || fail "$name: the whole help fits? (test assumes 80x24 cuts it)"
	keys G
	wait_for "remove the selected library or server" && wait_for "seal the manifest" &&
		ok "$name: help scrolls to the last action" || fail "$name: help does not scroll"
	wait_for "remove-library ID" && ok "$name: and to the commands" || fail "$name: commands not reachable"
	keys g
	wait_for "move down" && ok "$name: and back up" || fail "$name: g"
	keys x # any other key closes it, and does nothing else
	wait_gone "move down" && ok "$name: x closes the help" || fail "$name: help close"
	[ "$(sql "SELECT phase FROM cleanup.jobs WHERE id = $J")" = draining ] || fail "$name: x did something"
	quit_console || fail "$name: quit"

	COLS=160 ROWS=40 start "$BIN"
	wait_re " +$J prune +lib 1 Movies +draining" || fail "$name: job row at 160 columns"
	wait_for "VISITED DELETED" && ok "$name: 160 columns keep the job counters" || fail "$name: counters at 160"
	# The step history names each step's runner (pid
	# and application, cut to the column) when the panel is wide enough.
	"$CLEANUPCTL" --db "$DB" --quiet job run "$J" --max-steps 1 >/dev/null || fail "$name: one step"
	RBP=$(sql "SELECT runner_pid FROM cleanup.job_steps WHERE job_id = $J AND step_no = 1")
	keys Enter
	wait_re "GAP RUNNER +CURSOR" && wait_re " 1 [a-z].* $RBP cleanupctl:job:$J" &&
		ok "$name: the step history shows the step's runner at 160 columns" ||
		fail "$name: no runner in the step history (runner $RBP)"
	keys Escape
	quit_console || fail "$name: quit"
done
finish
