# q (and :quit) while this console runs a job asks first,
# in the dialog style of the confirmations, saying what quitting leaves:
# the job unfinished with NO RUNNER and its library closed to writers. n
# keeps the console and the run; y quits, the run stops after its current
# step and the job stays draining with its library closed. Without a run q
# quits at once. At 80x24 (the documented minimum, where the dialog is
# tightest) and 120x40. One build: the line editor does not matter here.
# The run is throttled (:throttle 0.25) so that it lasts; every wait polls
# the screen or the database.
. "$(dirname "$0")/lib.sh"

BIN=$CLEANUPCTL
db_fresh quitrun 4000
J=$(sealed_job 1 100)

runner_app() {
	sql "SELECT coalesce(max(r.application), '') FROM cleanup.job_runners r
	      WHERE r.job_id = $J AND cleanup.runner_live(r)"
}

# start_run: :throttle 0.25 (the job's 31 steps then take two minutes:
# it must still be running when the test quits, on a loaded machine
# too), then r and its typed confirmation; returns once
# the console's worker holds the job's runner lease.
start_run() {
	keys :
	type_text "throttle 0.25"
	keys Enter
	wait_for "THROTTLE 0.25/s" || fail "$1: no throttle"
	keys r
	wait_dialog "Type \"prune 1 Movies\"" || fail "$1: no run dialog"
	type_text "prune 1 Movies"
	keys Enter
	wait_sql "SELECT count(*) FROM cleanup.job_runners r
	           WHERE r.job_id = $J AND cleanup.runner_live(r) AND r.application = 'cleanupctl:job:$J:console'" 1 ||
		fail "$1: the console's run did not take the runner lease"
}

# declined N: the log shows N lines "HH:MM:SS console quit not done: the
# run goes on" (a test for wait_screen).
declined() { [ "$(grep -cE "[0-9]{2}:[0-9]{2}:[0-9]{2} console +quit not done: the run goes on" <<<"$SCREEN")" = "$1" ]; }

for size in 80x24 120x40; do
	at_size "$size"
	start "$BIN"
	wait_re "$J +prune +lib 1 Movies +draining" || fail "$size: job not shown"

	start_run "$size"
	step0=$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")
	if [ "$size" = 80x24 ]; then
		keys q
	else
		keys :
		type_text "quit"
		keys Enter
	fi
	wait_for "confirm: quit during a run" && ok "$size: quitting during a run asks" || fail "$size: no quit dialog"
	wait_dialog "This console is running job $J (prune, draining, step" &&
		wait_dialog "leaves job $J unfinished with NO RUNNER, and library 1 \"Movies\" closed to writers" &&
		wait_dialog "cleanupctl job run $J" && wait_dialog "Quit anyway? [y/N]" &&
		ok "$size: the question says what is left: job, runner, library closed" ||
		fail "$size: the quit question does not say what is left: $DIALOG"
	wait_for "y: yes   n / Enter / Esc: no" || fail "$size: the dialog's keys"

	# n: the console and its run go on. The answer is read from the log
	# (its console lines only, f x4), where it stays: the run's progress
	# takes the footer back within a step, before a loaded machine may
	# have looked at it.
	keys n
	wait_gone "Quit anyway? [y/N]" || fail "$size: the dialog stays after n"
	keys f f f f
	wait_re "log console only" || fail "$size: f did not show the console lines only"
	wait_screen "the log line" 10 declined 1 && ok "$size: n keeps the console" || fail "$size: n"
	gone_text "CONSOLE-EXIT=" || fail "$size: the console exited on n"
	wait_sql "SELECT step_no > $step0 FROM cleanup.jobs WHERE id = $J" t 20 && ok "$size: the run goes on after n" ||
		fail "$size: the run stopped after n"
	[ "$(runner_app)" = "cleanupctl:job:$J:console" ] || fail "$size: the console no longer runs the job"

	# Other keys do nothing while it asks; Esc declines.
	keys q
	wait_for "Quit anyway? [y/N]" || fail "$size: second dialog"
	keys j
	keys Escape
	wait_screen "a second log line" 10 declined 2 || fail "$size: Esc"
	gone_text "CONSOLE-EXIT=" || fail "$size: j or Esc quit"

	# y: quits; the run stops after its current step, the job is left as said.
	keys q
	wait_for "Quit anyway? [y/N]" || fail "$size: third dialog"
	keys y
	wait_for "CONSOLE-EXIT=0" 15 && ok "$size: y quits" || fail "$size: y did not quit"
	wait_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'cleanupctl:%console%'" 0 &&
		ok "$size: no console session left" || fail "$size: console sessions left: $(cleanupctl_backends)"
	[ "$(runner_app)" = "" ] && [ "$(sql "SELECT phase FROM cleanup.jobs WHERE id = $J")" = draining ] &&
		[ "$(sql "SELECT state FROM cleanup.library_admission WHERE library_id = 1")" = draining ] &&
		ok "$size: as said: job $J draining, no runner, library 1 closed" ||
		fail "$size: left: runner '$(runner_app)', phase $(sql "SELECT phase FROM cleanup.jobs WHERE id = $J"), admission $(sql "SELECT state FROM cleanup.library_admission WHERE library_id = 1")"
done

# Without a run, q quits at once: no question.
COLS=120 ROWS=40
start "$BIN"
wait_re "$J +prune +lib 1 Movies +draining" || fail "job not shown"
keys q
wait_for "CONSOLE-EXIT=0" && ok "without a run q quits at once" || fail "q without a run"
gone_text "Quit anyway?" || fail "a question was asked without a run"
finish
