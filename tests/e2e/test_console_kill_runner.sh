# The recovery demo from the console alone, first part:
# K kills the selected job's runner (terminates its backend; y/N, audited),
# the gap is visible ("NO RUNNER for ..."), a new runner started from the
# console resumes from the last committed step, and the counters are exact
# (every unseen item deleted once, the seen ones kept, step numbers without
# a hole). A row lock held by a psql session keeps the first runner busy,
# so the kill lands on a live runner at a known step; no sleeps.
. "$(dirname "$0")/lib.sh"

BIN=$CLEANUPCTL
db_fresh kill_runner
J=$(sealed_job 1 100) # library 1: 300 items, the first 100 in the manifest
"$CLEANUPCTL" --db "$DB" --quiet job run "$J" --max-steps 1 >/dev/null || fail "first step"
RUN_PID=
stop_bg() {
	[ -z "$RUN_PID" ] || kill -9 "$RUN_PID" 2>/dev/null
}
trap 'stop_bg; e2e_cleanup' EXIT

blocker_start "$J" # lib.sh: the job's row held FOR UPDATE until blocker_stop (also at exit)
"$CLEANUPCTL" --db "$DB" --quiet job run "$J" --max-busy 100000 >/dev/null 2>"$E2E_TMP/run.err" &
RUN_PID=$!
wait_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'cleanupctl:job:$J:run'" 1 || fail "no runner"
RBP=$(sql "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'cleanupctl:job:$J:run'")

start "$BIN"
wait_for "runner: backend $RBP" || fail "runner not shown"
keys K
wait_for "Terminate backend $RBP, the runner of job $J" && wait_for "[y/N]" && ok "K asks, naming the backend" ||
	fail "K dialog"
keys y
wait_for "kill-runner: backend $RBP of job $J terminated; the job stays at step 1" && ok "the runner was killed" ||
	fail "kill outcome"
rc=0
wait "$RUN_PID" || rc=$?
RUN_PID=
[ "$rc" = 1 ] && ok "the killed job run exited 1 (connection lost)" || fail "job run exit $rc: $(cat "$E2E_TMP/run.err")"
wait_for "NO RUNNER for" 5 && ok "the gap is visible" || fail "no gap shown"
wait_sql "SELECT count(*) FROM cleanup.audit WHERE action = 'kill-runner' AND job_id = $J AND confirmation = 'y'
            AND outcome LIKE 'kill-runner: backend $RBP %'" 1 && ok "the kill is audited" || fail "kill not audited"
[ "$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")" = 1 ] || fail "the job moved during the kill"

# The next runner, from the console, resumes from step 1.
blocker_stop
keys r
wait_dialog "Type \"prune 1 Movies\"" || fail "run dialog"
type_text "prune 1 Movies"
keys Enter
wait_sql "SELECT phase FROM cleanup.jobs WHERE id = $J" completed 30 && ok "a new runner completed the job" ||
	fail "the new runner did not complete"
[ "$(sql "SELECT deleted || '/' || kept || '/' || (SELECT count(*) FROM inventory.items WHERE library_id = 1)
           FROM cleanup.jobs WHERE id = $J")" = "200/100/100" ] && ok "counters exact: 200 deleted, 100 kept and left" ||
	fail "counters: $(sql "SELECT deleted || '/' || kept FROM cleanup.jobs WHERE id = $J")"
[ "$(sql "SELECT count(*) = max(step_no) AND min(step_no) = 1 FROM cleanup.job_steps WHERE job_id = $J")" = t ] &&
	ok "step numbers without a hole: the run continued from the last committed step" || fail "step numbers"
quit_console && ok "q quits" || fail "quit"
finish
