# F3: "no runner" is first-class.
#  - the console's header says "1 job NO RUNNER: library 1 closed 15m" for
#    a draining job nobody runs, counted from when its library was closed
#    (the seal), at 80x24 and 120x40; the badge goes while a runner holds
#    the job and comes back when the runner is gone;
#  - the jobs panel lists unfinished jobs above finished ones by default;
#    the job detail says how long the library has been closed;
#  - status, jobs and job show say NO RUNNER with the library closed, or
#    the runner's host:pid, its last step's age and the ETA; their --json
#    carry runner, no_runner, closed_s, last_step_age_s, pace_rows_per_s
#    and eta_s (keys added, none renamed).
# Every wait polls the screen, the CLI's output or the database.
. "$(dirname "$0")/lib.sh"

BIN=$CLEANUPCTL
db_fresh norunner 4000
J1=$(sealed_job 1 100)                                                           # draining, nobody runs it
J2=$("$CLEANUPCTL" --json --db "$DB" job create prune --library 4 | jq -r .id) # newer, then finished
"$CLEANUPCTL" --quiet --db "$DB" job cancel "$J2" >/dev/null || fail "cancel $J2"
# Closed 15 minutes ago (the seal), and a first step 10 minutes ago.
sql "UPDATE cleanup.jobs SET sealed_at = now() - interval '15 minutes' WHERE id = $J1" >/dev/null
RUN_PID=
stop_run() {
	[ -z "$RUN_PID" ] || { kill "$RUN_PID" 2>/dev/null; wait "$RUN_PID" 2>/dev/null; }
	RUN_PID=
}
trap 'stop_run; e2e_cleanup' EXIT
C() { "$CLEANUPCTL" --db "$DB" "$@"; }

# The CLI, nobody running the job.
OUT=$(C jobs)
grep -qE "^ +NO RUNNER: library 1 closed to writers for 15m[0-9]{2}s, no step yet \(cleanupctl job run $J1\)$" <<<"$OUT" &&
	ok "jobs: NO RUNNER with how long library 1 has been closed" || fail "jobs: $OUT"
[ "$(grep -oE "^[0-9]+ " <<<"$OUT" | tr -d ' ' | tr '\n' ' ')" = "$J1 $J2 " ] &&
	ok "jobs: the unfinished job above the newer finished one" || fail "jobs order: $OUT"
C status | grep -qF "NO RUNNER: library 1 closed to writers for 15m" && ok "status: NO RUNNER" || fail "status: $(C status | tail -4)"
C job show "$J1" | grep -qE "^  runner +NO RUNNER: library 1 closed to writers for 15m" && ok "job show: NO RUNNER" ||
	fail "job show: $(C job show "$J1" | head -8)"
jq -e --argjson j "$J1" '.runner == null and .no_runner == true and .closed_s >= 900 and .closed_s < 1000
	and .last_step_age_s == null and .eta_s == null and .id == $j and .phase == "draining"' <<<"$(C --json job show "$J1")" >/dev/null &&
	ok "job show --json: runner null, no_runner, closed_s from the seal" || fail "job show --json: $(C --json job show "$J1" --steps 0)"
jq -e --argjson j "$J1" '[.[] | select(.id == $j)][0].no_runner == true' <<<"$(C --json jobs)" >/dev/null &&
	jq -e --argjson j "$J2" '[.jobs[] | select(.id == $j)][0] | .no_runner == false and .closed_s == null' <<<"$(C --json status)" >/dev/null &&
	ok "jobs --json and status --json carry the keys" || fail "jobs/status --json"

for size in 80x24 120x40; do
	at_size "$size"
	stop_run
	start "$BIN"
	# At 80 columns the badge's shorter form (layout.h, tui_header_plan).
	if [ "$size" = 80x24 ]; then NR_RE="NO RUNNER: lib 1 1[56]m"; else NR_RE="1 job NO RUNNER: library 1 closed 1[56]m"; fi
	wait_re "^ .*$NR_RE( |$)" &&
		ok "$size: the header says NO RUNNER, library 1 closed 15m" || fail "$size: no NO RUNNER badge: $(head -1 <<<"$SCREEN")"
	# The connection stays on the header beside the
	# badge (the title, the clock and the rest give way first), its end
	# naming the port and the database.
	head -1 <<<"$SCREEN" | grep -qE "$NR_RE +.*:$PORT/cleanup_lab_e2e_norunner( |$)" &&
		ok "$size: the header keeps the connection beside NO RUNNER" || fail "$size: no connection on the header: $(head -1 <<<"$SCREEN")"
	grab
	[ "$(grep -oE "^│[> ] +[0-9]+ (prune|rm-lib)" <<<"$SCREEN" | grep -oE "[0-9]+" | tr '\n' ' ')" = "$J1 $J2 " ] &&
		ok "$size: the jobs panel lists the unfinished job first" || fail "$size: jobs panel order: $(grep -E "prune" <<<"$SCREEN")"
	grep -q "jobs by " <<<"$SCREEN" && fail "$size: the default order is named as a sort"
	if [ "$size" = 120x40 ]; then
		# The detail, full screen: since the last step, and since the close.
		keys Enter
		wait_re "NO RUNNER for [0-9a-z]+: library 1 \"Movies\" closed to writers for 1[56]m[0-9]{2}s \(r runs it" &&
			ok "$size: the detail says how long library 1 has been closed" || fail "$size: detail NO RUNNER line"
		keys Escape
		wait_re "\[jobs [12]/2\]" || fail "$size: Esc back to the jobs"
	fi

	# A runner: the badge goes; the CLI names it (host:pid), its last step, the ETA.
	"$CLEANUPCTL" --quiet --db "$DB" job run "$J1" --max-rate 2 >/dev/null 2>&1 &
	RUN_PID=$!
	wait_sql "SELECT count(*) FROM cleanup.job_runners r
	           WHERE r.job_id = $J1 AND cleanup.runner_live(r) AND r.application = 'cleanupctl:job:$J1:run'" 1 ||
		fail "$size: job run did not take the runner lease"
	RP=$(sql "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'cleanupctl:job:$J1:run'")
	HOST=$(hostname) # the runner's process: its host and OS pid ($RUN_PID)
	wait_gone "NO RUNNER: library 1" && ok "$size: the badge goes while a runner holds the job" || fail "$size: badge stays"
	if [ "$size" = 80x24 ]; then
		end=$((SECONDS + $(wait_limit 10)))
		until OUT=$(C jobs) && grep -qE "^ +runner $HOST:$RUN_PID \(cleanupctl:job:$J1:run\), last step [0-9]+s ago, pace [0-9]+ rows/s, ETA [0-9]+s$" <<<"$OUT"; do
			((SECONDS < end)) || break
			sleep 0.1
		done
		grep -qE "^ +runner $HOST:$RUN_PID \(cleanupctl:job:$J1:run\), last step [0-9]+s ago, pace [0-9]+ rows/s, ETA [0-9]+s$" <<<"$OUT" &&
			ok "jobs: runner host:pid, last step age, pace and ETA" || fail "jobs with a runner: $OUT"
		C job show "$J1" | grep -qE "^  runner +runner $HOST:$RUN_PID " && ok "job show: the runner" || fail "job show runner"
		jq -e --argjson p "$RP" --argjson o "$RUN_PID" --arg h "$HOST" '.runner.pid == $p and .runner.host == $h and .runner.os_pid == $o and .runner.direct and (.runner.application | test(":run$"))
			and .no_runner == false and (.last_step_age_s | type) == "number" and .pace_rows_per_s > 0 and .eta_s >= 0' \
			<<<"$(C --json job show "$J1" --steps 0)" >/dev/null &&
			ok "job show --json: runner, last step age, pace, ETA" || fail "job show --json with a runner: $(C --json job show "$J1" --steps 0)"
	fi
	# The runner gone (its process ended): the badge is back.
	stop_run
	wait_re "$NR_RE( |$)" 15 && ok "$size: the badge comes back when the runner is gone" ||
		fail "$size: no badge after the runner left"
	capture "no_runner_$size"
	quit_console || fail "$size: quit"
done
[ "$(sql "SELECT phase FROM cleanup.jobs WHERE id = $J1")" = draining ] || fail "job $J1 ended: the test needs it draining"
finish
