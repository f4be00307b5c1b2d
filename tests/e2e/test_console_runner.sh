# The console's progress, as the operator sees it (one build: the line
# editor does not matter here):
#  - item 11: the header says where the console is (user@host:port/db and
#    the server's version);
#  - item 10: a draining job nobody runs says "NO RUNNER for ..., library
#    closed to writers"; a `job run` of it shows as its runner (backend pid,
#    application); r on it is refused naming that runner, and so is a second
#    `job run` (exit 3); after kill -9 of the runner the console says
#    "NO RUNNER" again within seconds;
#  - bug 4: a run's progress reaches the footer at once, not after 15 s;
#  - bug 7: the run-end message reports the run's deletions, not the job's;
#  - bug 3: S on a paused job is refused before any dialog, naming the
#    phase; nothing about "expected count -1" is audited.
# No sleeps as synchronisation: screen content and database state are
# polled with bounded waits; a row lock held by a psql session (ended by
# pg_terminate_backend) keeps the runner busy for as long as the test needs.
. "$(dirname "$0")/lib.sh"

BIN=$CLEANUPCTL
db_fresh runner
DBNAME=cleanup_lab_e2e_runner
J=$(sealed_job 1 100)
RUN_PID=
stop_bg() {
	[ -z "$RUN_PID" ] || kill -9 "$RUN_PID" 2>/dev/null
}
trap 'stop_bg; e2e_cleanup' EXIT

# 180 columns: the header's NO RUNNER badge takes 40 of them
# while nobody runs the job; "where" and the version still fit.
COLS=180 start "$BIN"
wait_for "draining" || fail "job not shown"

# Item 11: where am I.
wait_re "postgres@[^ ]+:$PORT/$DBNAME +(PostgreSQL|PG) 15\.[0-9]+ +cmdline: $CMDLINE_BACKEND" &&
	ok "header: user@host:port/db and the server version (180 columns, with the NO RUNNER badge)" ||
	fail "header does not say where the console is: $(head -1 <<<"$SCREEN")"

# Item 10: nobody runs the draining job, and the console says so loudly.
wait_for "NO RUNNER for" && wait_for "library 1 \"Movies\" closed to writers" &&
	ok "a draining job without a runner is reported" || fail "no NO RUNNER line"
wait_re " +$J prune +lib 1 Movies +draining .* no runner" && ok "jobs panel: ETA says no runner" ||
	fail "jobs panel ETA"

# A writer-side row lock on the job keeps every step busy: the runner
# retries (and stays the runner) until the lock goes.
blocker_start "$J" # lib.sh: the job's row held FOR UPDATE until blocker_stop (also at exit)
"$CLEANUPCTL" --db "$DB" --quiet job run "$J" --max-busy 100000 >/dev/null 2>"$E2E_TMP/run.err" &
RUN_PID=$!
wait_sql "SELECT count(*) FROM cleanup.job_runners r
           WHERE r.job_id = $J AND cleanup.runner_live(r) AND r.application = 'cleanupctl:job:$J:run'" 1 || fail "job run did not take the runner lease"
RBP=$(sql "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'cleanupctl:job:$J:run'")
wait_re "runner: backend $RBP  last step [^ ]+ ago  cleanupctl:job:$J:run  on $(hostname):$RUN_PID " &&
	ok "the runner is shown (backend $RBP, its application, host and OS pid)" ||
	fail "runner not shown"
wait_gone "NO RUNNER for" 2 || fail "NO RUNNER still shown while the job has a runner"

# r on a job that has a runner: refused, naming it; no dialog.
keys r
wait_for "run not done: job $J is already being run by backend $RBP (cleanupctl:job:$J:run" &&
	ok "r refused, naming the runner" || fail "r on a running job"
gone_text "Type \"prune 1 Movies\"" || fail "a dialog opened for a second runner"

# A second `job run`: exit 3 (busy), naming the runner; the job unchanged.
rc=0
out=$("$CLEANUPCTL" --db "$DB" job run "$J" 2>&1) || rc=$?
[ "$rc" = 3 ] && grep -qF "job $J is already being run by backend $RBP (cleanupctl:job:$J:run" <<<"$out" &&
	ok "a second job run exits 3 naming the runner" || fail "second job run: exit $rc: $out"
[ "$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")" = 0 ] || fail "the refused runner changed the job"

# kill -9 of the runner: the console says NO RUNNER again within seconds.
kill -9 "$RUN_PID"
wait "$RUN_PID" 2>/dev/null
RUN_PID=
t0=$SECONDS
wait_for "NO RUNNER for" 5 && ok "a killed runner is reported within $((SECONDS - t0)) s" ||
	fail "killed runner not reported"
wait_gone "runner: backend $RBP" 2 || fail "the dead runner is still shown"

# Bug 4: the console's own run shows its progress in the footer at once
# (the busy answers come every second at most).
keys r
wait_dialog "Type \"prune 1 Movies\"" || fail "run dialog"
type_text "prune 1 Movies"
keys Enter
wait_for "running job $J: busy, retrying" 3 && ok "run progress in the footer at once" ||
	fail "run progress not shown within seconds"
wait_for " RUNNING " 2 || fail "RUNNING badge"
wait_for "runner: backend" 5 && wait_for "cleanupctl:job:$J:console" 2 && ok "the console's run is the runner" ||
	fail "console run not shown as runner"
keys t
wait_for "stopped by the operator" 10 && ok "t stops the busy run" || fail "t"

# Let the job go: one step from the CLI, then the console runs the rest.
blocker_stop
"$CLEANUPCTL" --db "$DB" --quiet job run "$J" --max-steps 1 >/dev/null || fail "one step from the CLI"
D1=$(sql "SELECT deleted FROM cleanup.jobs WHERE id = $J")
wait_for "NO RUNNER for" 5 || fail "the one-step runner is still shown after it ended"
keys r
wait_dialog "Type \"prune 1 Movies\"" || fail "run dialog (2)"
type_text "prune 1 Movies"
keys Enter
wait_sql "SELECT phase FROM cleanup.jobs WHERE id = $J" completed 20 || fail "the console's run did not complete the job"
TOTAL=$(sql "SELECT deleted FROM cleanup.jobs WHERE id = $J")
wait_for "this run deleted $((TOTAL - D1)) " 10 && wait_for "job total deleted $TOTAL" 2 &&
	ok "the run-end message has the run's deletions ($((TOTAL - D1))) beside the job's ($TOTAL)" ||
	fail "run-end message"

# Bug 3: S on a paused job: refused before any dialog, nothing audited.
J2=$("$CLEANUPCTL" --json --db "$DB" job create prune --library 3 | jq -r .id)
sql "SELECT cleanup.job_transition($J2, 'pause')" >/dev/null
wait_re " +$J2 prune +lib 3 Movies +paused" || fail "paused job not shown"
keys g
keys S
wait_for "seal not done: job $J2 is paused: only a collecting job can be sealed" &&
	ok "S on a paused job is refused, naming the phase" || fail "S on a paused job"
gone_text "Type" || fail "a dialog opened"
[ "$(sql "SELECT count(*) FROM cleanup.audit WHERE outcome LIKE '%-1%' AND action = 'seal'")" = 0 ] ||
	fail "a seal with count -1 was audited"

quit_console && ok "q quits" || fail "quit"
finish
