# The step history's "next gap" keys. Two runners in
# turn (job step --steps 3, then job run --max-steps 3): ] from the newest
# step jumps to step 4, marks it '*', and the footer says "step 4: runner
# changed: ste PID1 -> run PID2 after ..."; [ from there finds no newer
# gap and says so. At 120x40 zoomed and beside the locks panel (74
# columns: the runner tag and the cursor's end stay), and at 80x24 zoomed
# (the dashboard's detail has no room for steps there). Every wait polls
# the screen.
. "$(dirname "$0")/lib.sh"

BIN=$CLEANUPCTL
db_fresh gaps 4000
J=$(sealed_job 1 100)
"$CLEANUPCTL" --quiet --db "$DB" job step "$J" --steps 3 >/dev/null || fail "job step --steps 3"
"$CLEANUPCTL" --quiet --db "$DB" job run "$J" --max-steps 3 >/dev/null || fail "job run --max-steps 3"
[ "$(sql "SELECT max(step_no) FROM cleanup.job_steps WHERE job_id = $J")" = 6 ] || fail "six steps expected"
P1=$(sql "SELECT runner_pid FROM cleanup.job_steps WHERE job_id = $J AND step_no = 3")
P2=$(sql "SELECT runner_pid FROM cleanup.job_steps WHERE job_id = $J AND step_no = 4")
[ -n "$P1" ] && [ -n "$P2" ] && [ "$P1" != "$P2" ] || fail "two runners expected: '$P1' '$P2'"
# the cursor's end: a prune drains in external-ID order here (the key)
END4=$(sql "SELECT left(check_to, 16) FROM cleanup.job_steps WHERE job_id = $J AND step_no = 4")
[ -n "$END4" ] || fail "step 4 has no key range"
GAP_RE="step 4: runner changed: ste $P1 -> run $P2 after [0-9.]+[smh]"

for size in 120x40 80x24; do
	at_size "$size"
	start "$BIN"
	wait_re "$J +prune +lib 1 Movies +draining" || fail "$size: job not shown"
	keys Enter
	wait_for "[job $J detail 1/6]" || fail "$size: the detail did not open"
	wait_re "^│ +6 drain" || fail "$size: step 6 not shown"
	keys ]
	wait_re "$GAP_RE" && ok "$size: ] jumps to step 4 and the footer says the runner changed" ||
		fail "$size: no gap text in the footer"
	wait_for "[job $J detail 3/6]" && ok "$size: the selection is on step 4" || fail "$size: selection not on step 4"
	grep -qE "^│\* +4 drain" <<<"$SCREEN" && ok "$size: step 4 marked" || fail "$size: step 4 not marked: $(grep -E '^│.{1,6}4 drain' <<<"$SCREEN")"
	grep -qE "^│\* +[1-35-6] drain" <<<"$SCREEN" && fail "$size: a step without a gap is marked"
	keys [
	wait_re "no gap above step 4 in the steps read \(1-6\)" && ok "$size: [ finds no newer gap" || fail "$size: ["
	keys ]
	wait_re "no gap below step 4 in the steps read \(1-6\)" && ok "$size: ] finds no older one" || fail "$size: ] below"
	if [ "$size" = 120x40 ]; then
		# The dashboard's detail (74 columns beside the locks panel):
		# the runner tag and the cursor's end stay, the duration goes.
		keys Escape
		wait_re "\[jobs 1/1\]" || fail "$size: Esc back to the jobs"
		wait_re "│ +STEP ACTION +VIS +DEL .* AT +GAP RUNNER +END" && ok "$size: the detail keeps RUNNER and END at 74" ||
			fail "$size: heading at 74: $(grep -E 'STEP ACTION' <<<"$SCREEN")"
		grep -qE "run $P2 +> $END4" <<<"$(grep -E "│\* +4 drain" <<<"$SCREEN")" && grep -qE "│\* +4 drain" <<<"$SCREEN" &&
			ok "$size: step 4 shows its runner tag and cursor end ($END4)" ||
			fail "$size: step 4 at 74: $(grep -E '│.{1,6}4 drain' <<<"$SCREEN")"
		grep -q "DUR ms" <<<"$SCREEN" && fail "$size: the duration should give way at 74"
		keys Tab
		wait_re "\[job $J detail 3/6\]" || fail "$size: Tab to the detail"
		keys g
		wait_re "\[job $J detail 1/6\]" || fail "$size: g in the detail"
		keys ]
		wait_re "$GAP_RE" && ok "$size: ] in the dashboard's detail" || fail "$size: ] unzoomed"
	fi
	capture "gaps_$size"
	quit_console || fail "$size: quit"
done
finish
