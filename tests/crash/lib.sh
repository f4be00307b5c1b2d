# Shared helpers of the crash tests (tests/crash/test_*.sh), sourced by each.
#
# Two kinds of crash test (docs/testing.md):
#   test_FP_*.sh  the failpoint matrix (make test): a named failpoint
#                 (sql/functions/012_failpoints.sql, core/src/failpoint.c)
#                 holds the runner at a chosen point, the test observes it
#                 there (a backend waiting on the point's advisory lock, or
#                 the runner stopped: state T), kills the runner, its backend
#                 or the server, resumes, and compares the end state with
#                 ground truth. Nothing is timed.
#   test_S*.sh    random-timing kills (make soak only: they exit 77, skipped,
#                 unless CLEANUP_CRASH_ROUNDS is set): `job run` is killed at
#                 random moments, many times. Random delays only choose WHEN
#                 to kill; they assert exactness, never a number of hits.
# After every kill the job is resumed from a new process and connection and
# the final state is compared with a ground truth computed before the run:
# which rows survive, which were deleted, and every counter of the job. Waits
# are observations (pg_locks, pg_stat_activity, pg_blocking_pids(),
# /proc/PID/stat), bounded, never sleeps standing in for synchronisation.
#
# Environment (ctest sets it): CLEANUPCTL, CLEANUP_TEST_SANDBOX.
#   CLEANUP_CRASH_ROUNDS  kills per random-timing scenario (unset: those tests
#                         are skipped); more rounds also mean proportionally
#                         more data (scaled), e.g. 100 for a soak
#   CRASH_*_ITEMS         the data size of one test (see each test)
#   CLEANUP_CRASH_SEED    seed of $RANDOM, to repeat a run (default: random, printed)
set -euo pipefail

: "${CLEANUPCTL:?run through ctest: CLEANUPCTL is not set}"
: "${CLEANUP_TEST_SANDBOX:?run through ctest: CLEANUP_TEST_SANDBOX is not set}"

ROUNDS=${CLEANUP_CRASH_ROUNDS:-12}
SEED=${CLEANUP_CRASH_SEED:-$$}
RANDOM=$SEED
CRASH_TMP=$(mktemp -d /tmp/cleanupctl-crash.XXXXXX)
CRASH_BG_PIDS=()
CRASH_FAILED=0
RUN_OPTS=() # extra options of the resuming `job run` (resume)

PRIVATE_SANDBOX= # set by private_sandbox: stopped and removed at exit

crash_cleanup() {
	local p
	for p in "${CRASH_BG_PIDS[@]}"; do
		kill -CONT "$p" 2>/dev/null || true
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	if [ -n "$PRIVATE_SANDBOX" ]; then
		"$CLEANUPCTL" --quiet sandbox stop --dir "$PRIVATE_SANDBOX" >/dev/null 2>&1 || true
		rm -rf "$PRIVATE_SANDBOX"
	fi
	rm -rf "$CRASH_TMP"
}
trap crash_cleanup EXIT

# soak_only: a random-timing test runs in `make soak` (CLEANUP_CRASH_ROUNDS
# set) and is skipped (exit 77, ctest's SKIP_RETURN_CODE) in `make test`:
# how many random kills hit an unfinished job depends on the machine's
# speed; the failpoint matrix (test_FP_*.sh) covers the same invariants
# deterministically.
soak_only() {
	if [ -z "${CLEANUP_CRASH_ROUNDS:-}" ]; then
		echo "skipped: random-timing kills run in make soak (CLEANUP_CRASH_ROUNDS unset)"
		exit 77
	fi
}

# scaled N: N for the default 12 rounds, proportionally more data for more
# rounds (a soak), so that the kills still spread over a job.
scaled() { echo $(($1 * (ROUNDS > 12 ? ROUNDS : 12) / 12)); }

log() { printf '[%s] %s\n' "$(date +%T.%N | cut -c1-12)" "$*"; }

fail() {
	printf 'FAIL: %s\n' "$*" >&2
	if [ -n "${RUN_ERR:-}" ] && [ -s "$RUN_ERR" ]; then
		printf 'stderr of the last job run (exit %s):\n' "${RUN_RC:-?}" >&2
		sed 's/^/  /' "$RUN_ERR" >&2
	fi
	CRASH_FAILED=1
	exit 1
}

# use_server_psql BINDIR: psql is BINDIR/psql from here on when it exists,
# not Debian's wrapper (a Perl script that costs ~100 ms a call on a busy
# machine: the tests call psql thousands of times).
use_server_psql() {
	if [ -x "$1/psql" ]; then
		CRASH_PSQL=$1/psql
		psql() { "$CRASH_PSQL" "$@"; }
	fi
}

# crash_init NAME: a fresh database cleanup_lab_t_crash_NAME with the schema
# and the lab.
# Sets CONN (conninfo) and ADMIN (the postgres database).
crash_init() {
	local name=$1 info sock port
	info=$("$CLEANUPCTL" --json sandbox status --dir "$CLEANUP_TEST_SANDBOX")
	sock=$(jq -r .socket_dir <<<"$info")
	port=$(jq -r .port <<<"$info")
	use_server_psql "$(jq -r .bindir <<<"$info")"
	DB=cleanup_lab_t_crash_$name
	ADMIN="host=$sock port=$port dbname=postgres user=postgres"
	CONN="host=$sock port=$port dbname=$DB user=postgres"
	PGOPTIONS='-c client_min_messages=warning' psql -X -q "$ADMIN" -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB" \
		>/dev/null
	"$CLEANUPCTL" --quiet --db "$CONN" install >/dev/null
	# The lab's own step (schema cleanup_lab, cleanup_lab.seed_demo): seeds nothing.
	"$CLEANUPCTL" --quiet --db "$CONN" seed --servers 0 --libraries 0 --items 0 >/dev/null
	# Tests run in parallel, each in its own database, with the same job ids
	# and application names: look only at this database's sessions.
	q "CREATE SCHEMA crashtest;
	   CREATE VIEW crashtest.activity AS SELECT * FROM pg_stat_activity WHERE datname = current_database()"
	log "database $DB ready; seed $SEED, $ROUNDS rounds (CLEANUP_CRASH_SEED=$SEED repeats this run)"
}

# q SQL [-v name=value ...]: one value (or rows, |-separated) from the test
# database. Values travel as psql variables (:'name' quotes them as literals).
# (psql interpolates variables only in input it reads, not in -c.)
q() {
	local sql=$1
	shift
	psql -X -q -At -v ON_ERROR_STOP=1 "$@" "$CONN" <<<"$sql"
}

assert_eq() {
	local actual=$1 expected=$2 what=$3
	[ "$actual" = "$expected" ] || fail "$what: got '$actual', expected '$expected'"
}

# assert_inventory_is PREDICATE MESSAGE [psql -v ...]: inventory.items holds
# exactly the (id, library_id) rows of the ground truth crashtest.before
# that satisfy PREDICATE, no more and no fewer.
assert_inventory_is() {
	local pred=$1 what=$2
	shift 2
	assert_eq "$(q "SELECT count(*) FROM (
		(SELECT id, library_id FROM inventory.items
		 EXCEPT SELECT id, library_id FROM crashtest.before WHERE $pred)
		UNION ALL
		(SELECT id, library_id FROM crashtest.before WHERE $pred
		 EXCEPT SELECT id, library_id FROM inventory.items)) d" "$@")" 0 "$what"
}

assert_le() {
	local actual=$1 bound=$2 what=$3
	[ "$actual" -le "$bound" ] || fail "$what: got $actual, expected at most $bound"
}

# rand LO HI: an integer in [LO, HI].
rand() { echo $((RANDOM % ($2 - $1 + 1) + $1)); }

# sleep_ms N
sleep_ms() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }

job_field() { q "SELECT $2 FROM cleanup.jobs WHERE id = :'job'" -v job="$1"; }

# job_create KIND TARGET: prints the new job's id.
# (The id is read with a bash pattern, not jq: jq costs ~0.2 s a call on a
# busy machine, and the matrix creates dozens of jobs.)
job_create() {
	local opt=--library out
	[ "$1" = remove-server ] && opt=--server
	out=$("$CLEANUPCTL" --db "$CONN" --json job create "$1" "$opt" "$2") || return 0
	[[ $out =~ ^\{\"id\":\ ?([0-9]+), ]] && echo "${BASH_REMATCH[1]}"
}

# seen_prune_job LIB: a prune job of library LIB whose manifest is the
# external ids of crashtest.seen, sealed with their count; prints its id.
seen_prune_job() {
	local job
	job=$(job_create prune "$1")
	q "SELECT external_id FROM crashtest.seen" | "$CLEANUPCTL" --db "$CONN" --quiet job append "$job" >/dev/null
	"$CLEANUPCTL" --db "$CONN" --quiet job seal "$job" --expected "$(q "SELECT count(*) FROM crashtest.seen")" >/dev/null
	echo "$job"
}

# prune_exact JOB LIB DELETED KEPT UNSEEN: the resumed prune JOB of library
# LIB is consistent and completed, deleted DELETED items, kept KEPT and
# moved, found absent or retained none; the inventory is the ground truth
# without the items of LIB matching UNSEEN (an SQL condition); its steps
# replay.
prune_exact() {
	check_consistent "$1" "prune after resume"
	assert_eq "$(job_field "$1" "phase || ' ' || deleted || ' ' || kept || ' ' || (moved + absent + retained)")" \
		"completed $3 $4 0" "prune phase, deleted, kept, moved + absent + retained"
	assert_inventory_is "NOT (library_id = :'lib' AND $5)" \
		"inventory differs from the ground truth after the prune (exactly the unseen items of library $2 gone)" \
		-v lib="$2"
	check_replay "$1"
}

# remove_server_exact JOB SERVER DELETED LIBS LIB UNSEEN: the resumed
# remove-server JOB of SERVER is consistent and completed, deleted DELETED
# items, LIBS libraries and the server (its row is gone); the inventory is
# the ground truth without SERVER's items and the items of library LIB
# matching UNSEEN (pruned before); its steps replay.
remove_server_exact() {
	check_consistent "$1" "remove-server after resume"
	assert_eq "$(job_field "$1" "phase || ' ' || deleted || ' ' || libraries_deleted || ' ' || servers_deleted")" \
		"completed $3 $4 1" "remove-server phase, deleted, libraries_deleted, servers_deleted"
	assert_inventory_is "server_id <> :'s' AND NOT (library_id = :'lib' AND $6)" \
		"inventory differs from the ground truth after removing server $2" -v lib="$5" -v s="$2"
	assert_eq "$(q "SELECT count(*) FROM inventory.media_servers WHERE id = :'s'" -v s="$2")" 0 "server row"
	check_replay "$1"
}

# prune_soak LIB UNSEEN BREAK FINISH: a soak test's prune. The items of
# library LIB not matching UNSEEN (an SQL condition on crashtest.before)
# are crashtest.seen, the manifest of a new sealed prune job of LIB (its id
# in job); BREAK JOB STEPS interrupts its runs over its STEPS (unseen items
# / 128 + 2), FINISH JOB brings it to completion, and the job must then be
# exact (prune_exact).
prune_soak() {
	local lib=$1 unseen=$2 seen want
	q "CREATE TABLE crashtest.seen AS
	   SELECT external_id FROM crashtest.before WHERE library_id = :'lib' AND NOT ($unseen)" -v lib="$lib"
	seen=$(q "SELECT count(*) FROM crashtest.seen")
	job=$(seen_prune_job "$lib")
	want=$(q "SELECT count(*) FROM crashtest.before WHERE library_id = :'lib' AND $unseen" -v lib="$lib")
	"$3" "$job" $((want / 128 + 2))
	"$4" "$job"
	prune_exact "$job" "$lib" "$want" "$seen" "$unseen"
}

# remove_server_soak SERVER LIB UNSEEN BREAK FINISH: a soak test's
# remove-server of SERVER after prune_soak LIB UNSEEN: a new job (its id in
# job), BREAK JOB STEPS over its STEPS (the server's items / 128 + 5),
# FINISH JOB, and the job must then be exact (remove_server_exact: every
# library SERVER had deleted).
remove_server_soak() {
	local server=$1 want libs
	want=$(q "SELECT count(*) FROM crashtest.before WHERE server_id = :'s'" -v s="$server")
	libs=$(q "SELECT count(*) FROM inventory.libraries WHERE server_id = :'s'" -v s="$server")
	job=$(job_create remove-server "$server")
	"$4" "$job" $((want / 128 + 5))
	"$5" "$job"
	remove_server_exact "$job" "$server" "$want" "$libs" "$2" "$3"
}

# start_run JOB [ARGS...]: `job run JOB --json ARGS` in the background; sets
# RUN_PID, RUN_OUT, RUN_ERR.
start_run() {
	local job=$1
	shift
	RUN_OUT=$CRASH_TMP/run.$RANDOM.out
	RUN_ERR=$CRASH_TMP/run.$RANDOM.err
	"$CLEANUPCTL" --db "$CONN" --json job run "$job" "$@" >"$RUN_OUT" 2>"$RUN_ERR" &
	RUN_PID=$!
}

# wait_run: waits for the background run; sets RUN_RC.
wait_run() {
	RUN_RC=0
	{ wait "$RUN_PID"; } 2>/dev/null || RUN_RC=$?
}

# check_consistent JOB WHERE: the job is at its last committed step. Its
# step_no is the highest recorded step, steps are numbered 1..step_no with
# no gap, and each counter equals the sum over the recorded steps (S7, S9),
# the dependents' and claims' counters included (seed 001). Every step kept
# its budget (S1, D2: at most 128 candidates visited, 128 domain mutations,
# 1024 rows examined; the mutations are the sum of their kinds) and its
# counts add up (every visited candidate has one verdict, a released claim
# ends in a verdict, and a row that left before a step reached it is moved
# or absent early: visited + released + moved_early + absent_early =
# deleted + moved + absent + retained + claimed; every examined row was
# visited or kept).
check_consistent() {
	local job=$1 where=$2 r
	r=$(q "SELECT $(consistent_sql)" -v job="$job")
	if [ "$r" != t ]; then
		q "SELECT id, phase, step_no, examined, visited, deleted, moved, absent, retained, kept, claimed, released,
		          retries_deleted, previews_deleted, collections_deleted, sync_status_deleted, history_detached
		     FROM cleanup.jobs WHERE id = :'job'" -v job="$job" >&2
		q "SELECT count(*), max(step_no), sum(examined), sum(visited), sum(deleted), sum(kept), sum(claimed), sum(released),
		          sum(retries_deleted), sum(previews_deleted), max(mutations)
		     FROM cleanup.job_steps WHERE job_id = :'job'" -v job="$job" >&2
		fail "$where: job $job is not at a consistent last committed step"
	fi
}

# consistent_sql: check_consistent's condition as one scalar subquery on
# job :'job' (true when it holds), for checks that ask several things in
# one query.
consistent_sql() {
	cat <<'EOF_SQL'
(SELECT j.step_no = coalesce(max(s.step_no), 0)
        AND count(s.step_no) = j.step_no
        AND j.examined = coalesce(sum(s.examined), 0)
        AND j.visited = coalesce(sum(s.visited), 0) AND j.deleted = coalesce(sum(s.deleted), 0)
        AND j.moved = coalesce(sum(s.moved), 0) AND j.absent = coalesce(sum(s.absent), 0)
        AND j.retained = coalesce(sum(s.retained), 0) AND j.kept = coalesce(sum(s.kept), 0)
        AND j.libraries_deleted = coalesce(sum(s.libraries_deleted), 0)
        AND j.servers_deleted = coalesce(sum(s.servers_deleted), 0)
        AND j.claimed = coalesce(sum(s.claimed), 0) AND j.released = coalesce(sum(s.released), 0)
        AND j.retries_deleted = coalesce(sum(s.retries_deleted), 0)
        AND j.previews_deleted = coalesce(sum(s.previews_deleted), 0)
        AND j.collections_deleted = coalesce(sum(s.collections_deleted), 0)
        AND j.sync_status_deleted = coalesce(sum(s.sync_status_deleted), 0)
        AND j.history_detached = coalesce(sum(s.history_detached), 0)
        AND bool_and(coalesce(s.visited + s.released + s.moved_early + s.absent_early
                              = s.deleted + s.moved + s.absent + s.retained + s.claimed, true))
        AND j.moved_early = coalesce(sum(s.moved_early), 0) AND j.absent_early = coalesce(sum(s.absent_early), 0)
        AND bool_and(coalesce(s.examined = s.visited + s.kept, true))
        AND bool_and(coalesce(s.action = 'single-transaction'
                              OR s.mutations = s.deleted + s.retries_deleted + s.previews_deleted
                                 + s.collections_deleted + s.sync_status_deleted + s.history_detached
                                 + s.libraries_deleted + s.servers_deleted, true))
        AND bool_and(coalesce(s.mutations <= 128 AND s.visited <= 128 AND s.examined <= 1024, true))
   FROM cleanup.jobs j LEFT JOIN cleanup.job_steps s ON s.job_id = j.id
  WHERE j.id = :'job' GROUP BY j.id)
EOF_SQL
}

# resume JOB: runs the job to completion from new processes, retrying busy
# answers (exit 3) a bounded number of times. Fails on any other error.
resume() {
	local job=$1 tries=0 rc
	while :; do
		rc=0
		"$CLEANUPCTL" --db "$CONN" --json job run "$job" "${RUN_OPTS[@]}" >"$CRASH_TMP/resume.out" \
			2>"$CRASH_TMP/resume.err" || rc=$?
		# Exit 0 and the job's phase completed in the run's answer (the
		# answer's first phase: the job's; read without jq, see job_create).
		if [ "$rc" -eq 0 ] && [[ $(<"$CRASH_TMP/resume.out") =~ \"phase\":\ ?\"([a-z]+)\" ]] &&
			[ "${BASH_REMATCH[1]}" = completed ]; then
			return 0
		fi
		tries=$((tries + 1))
		if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ] || [ "$tries" -gt 50 ]; then
			cat "$CRASH_TMP/resume.err" >&2
			fail "resuming job $job: exit $rc after $tries tries, phase $(job_field "$job" phase)"
		fi
	done
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# calibrate JOB: runs the first steps of JOB (`job run --max-steps 1`, then
# `--max-steps 5`) and sets STEP_MS (one step) and START_MS (process start
# and connection), so that kill delays can be spread over the whole run.
calibrate() {
	local t0 t1 t2 a b
	t0=$(now_ms)
	"$CLEANUPCTL" --db "$CONN" --quiet job run "$1" --max-steps 1 >/dev/null 2>&1 || true
	t1=$(now_ms)
	"$CLEANUPCTL" --db "$CONN" --quiet job run "$1" --max-steps 5 >/dev/null 2>&1 || true
	t2=$(now_ms)
	a=$((t1 - t0))
	b=$((t2 - t1))
	STEP_MS=$(((b - a) / 4))
	((STEP_MS >= 1)) || STEP_MS=1
	START_MS=$((a - STEP_MS))
	((START_MS >= 0)) || START_MS=0
	log "calibrated: a step takes ~$STEP_MS ms, starting job run ~$START_MS ms"
}

# kill9_rounds JOB STEPS: ROUNDS times, starts `job run JOB` and kills it
# with SIGKILL after a random delay, spread so that the ROUNDS kills fall
# over the job's remaining STEPS (an estimate); after each kill the job must
# be at a consistent last committed step. Stops early when the job
# completes. Sets KILLS (kills of a live runner of an unfinished job), which
# is reported, never required: how many kills land before the job ends
# depends on the machine (the resume and the exact end state are the test).
kill9_rounds() {
	local job=$1 steps=$2 i max left
	KILLS=0
	calibrate "$job"
	left=$((steps - $(job_field "$job" step_no)))
	max=$((2 * (35 * left * STEP_MS / (100 * ROUNDS) + START_MS)))
	((max >= 5)) || max=5
	log "job $job: ~$left steps left; kill -9 after 0..$max ms, $ROUNDS times"
	for ((i = 1; i <= ROUNDS; i++)); do
		[ "$(job_field "$job" phase)" = completed ] && break
		start_run "$job"
		sleep_ms "$(rand 0 "$max")"
		kill -9 "$RUN_PID" 2>/dev/null || true
		wait_run
		((RUN_RC != 137)) || KILLS=$((KILLS + 1))
		# The killed client's backend may still be finishing its step: the
		# next step waits for its locks (busy), never runs it twice.
		check_consistent "$job" "after kill -9 #$i (exit $RUN_RC)"
	done
	log "job $job: $KILLS kill -9 at step $(job_field "$job" step_no), phase $(job_field "$job" phase)"
}

# snapshot NAME: records the inventory (id, library, external ID, xmin) as
# table crashtest.NAME, the ground truth later checks compare with.
snapshot() {
	q "SET client_min_messages = warning;
	   DROP TABLE IF EXISTS crashtest.$1;
	   CREATE TABLE crashtest.$1 AS
	   SELECT i.id, i.library_id, l.server_id, i.external_id FROM inventory.items i
	     JOIN inventory.libraries l ON l.id = i.library_id"
}

# check_replay JOB: `job step JOB --replay N` of every committed step returns
# the recorded counts (S8) and changes nothing: the job row, its steps and
# the inventory are the same before and after.
check_replay() {
	local job=$1 n i before after
	n=$(job_field "$job" step_no)
	before=$(q "SELECT md5(j::text) || ':' || (SELECT count(*) FROM inventory.items) || ':' ||
	               (SELECT md5(string_agg(s::text, ',' ORDER BY step_no)) FROM cleanup.job_steps s WHERE job_id = j.id)
	              FROM cleanup.jobs j WHERE id = :'job'" -v job="$job")
	: >"$CRASH_TMP/replay.json"
	for ((i = 1; i <= n; i++)); do
		"$CLEANUPCTL" --db "$CONN" --json job step "$job" --replay "$i" >>"$CRASH_TMP/replay.json" ||
			fail "replay of step $i of job $job exited $?"
	done
	after=$(q "SELECT md5(j::text) || ':' || (SELECT count(*) FROM inventory.items) || ':' ||
	              (SELECT md5(string_agg(s::text, ',' ORDER BY step_no)) FROM cleanup.job_steps s WHERE job_id = j.id)
	             FROM cleanup.jobs j WHERE id = :'job'" -v job="$job")
	assert_eq "$after" "$before" "job $job, its steps and the inventory after replaying $n steps"
	jq -c '.steps[0] | {step_no, action, examined, visited, deleted, moved, absent, retained, kept, libraries_deleted,
	                    servers_deleted}' "$CRASH_TMP/replay.json" >"$CRASH_TMP/replay.got"
	q "SELECT json_build_object('step_no', step_no, 'action', action, 'examined', examined, 'visited', visited,
	          'deleted', deleted,
	          'moved', moved, 'absent', absent, 'retained', retained, 'kept', kept,
	          'libraries_deleted', libraries_deleted, 'servers_deleted', servers_deleted)
	     FROM cleanup.job_steps WHERE job_id = :'job' ORDER BY step_no" -v job="$job" |
		jq -c . >"$CRASH_TMP/replay.want"
	if ! diff -u "$CRASH_TMP/replay.want" "$CRASH_TMP/replay.got" >&2; then
		fail "replayed results of job $job differ from its recorded steps"
	fi
	jq -e -s 'length == '"$n"' and all(.steps[0].replayed == true)' "$CRASH_TMP/replay.json" >/dev/null ||
		fail "replays of job $job were not all marked replayed"
	log "job $job: replayed $n committed steps; recorded counts returned, nothing changed"
}

# hook_hold: holds the lock of failpoint step_after_discovery (the engine's
# test hook under its older name, cleanup.test_hook_key()): a step run with
# PGOPTIONS='-c cleanup.test_hook=after_discovery' (or
# cleanup.failpoints=step_after_discovery) stops between discovery and its
# re-read until hook_release.
hook_hold() { fp_hold step_after_discovery; }
hook_release() { fp_release; }

# wait_for SQL WANT WHAT [-v name=value ...]: polls SQL (every 10 ms, at
# most 30 s) until it returns WANT. Observation of server state, not a sleep
# as synchronisation.
wait_for() {
	local i
	for ((i = 0; i < 3000; i++)); do
		[ "$(q "$1" "${@:4}")" = "$2" ] && return 0
		sleep 0.01
	done
	fail "timed out waiting for $3"
}

# blocked_runner JOB: waits until the backend of `job run JOB` is blocked by
# another backend (pg_blocking_pids) and prints its pid; prints nothing when
# the run ended first.
blocked_runner() {
	local job=$1 i pid
	for ((i = 0; i < 3000; i++)); do
		pid=$(q "SELECT pid FROM crashtest.activity
		          WHERE application_name = 'cleanupctl:job:' || :'job' || ':run'
		            AND cardinality(pg_blocking_pids(pid)) > 0 LIMIT 1" -v job="$job")
		if [ -n "$pid" ]; then
			echo "$pid"
			return 0
		fi
		kill -0 "$RUN_PID" 2>/dev/null || return 0
		sleep 0.01
	done
	fail "job run $job never blocked on the hook"
}

# terminate_rounds JOB STEPS: ROUNDS times, terminates the backend of
# `job run JOB` mid-step and checks the CLI exits 1 (connection lost) and the
# job is at its last committed step. Odd rounds stop the step between
# discovery and deletion with the test hook (deterministically mid-step: the
# step must leave no trace); even rounds terminate at a random moment. Every
# third round also kills the client while its backend is held mid-step, then
# lets that orphaned step finish: it commits exactly once, and the next run
# continues after it. STEPS estimates the job's steps, to spread the rounds
# over it. Sets TERMS.
terminate_rounds() {
	local job=$1 steps=$2 i pid before rc max per
	TERMS=0
	calibrate "$job"
	per=$(((steps - $(job_field "$job" step_no)) / ROUNDS))
	((per >= 1)) || per=1
	max=$((START_MS + per * STEP_MS))
	for ((i = 1; i <= ROUNDS; i++)); do
		[ "$(job_field "$job" phase)" = completed ] && break
		# Some progress between the interruptions.
		"$CLEANUPCTL" --db "$CONN" --quiet job run "$job" --max-steps "$(rand 1 $((per / 2 + 1)))" >/dev/null 2>&1 || true
		[ "$(job_field "$job" phase)" = completed ] && break
		before=$(job_field "$job" step_no)
		if ((i % 2 == 1)); then
			hook_hold
			PGOPTIONS='-c cleanup.test_hook=after_discovery' start_run "$job"
			pid=$(blocked_runner "$job")
			if [ -z "$pid" ]; then
				# No drain step left to hold (final check or finalize): it ran.
				wait_run
				hook_release
				check_consistent "$job" "terminate round $i (nothing to hold)"
				continue
			fi
			if ((i % 3 == 0)); then
				# kill -9 the client; its backend still holds the step.
				kill -9 "$RUN_PID"
				wait_run
				hook_release
				wait_for "SELECT count(*) FROM crashtest.activity WHERE pid = :'pid'" 0 \
					"the orphaned backend to end" -v pid="$pid"
				check_consistent "$job" "orphaned step of round $i"
				rc=$(job_field "$job" step_no)
				[ "$rc" -eq "$before" ] || [ "$rc" -eq $((before + 1)) ] ||
					fail "orphaned step: step_no went from $before to $rc"
				log "round $i: client killed mid-step; its backend committed step $rc (was $before)"
				continue
			fi
			q "SELECT pg_terminate_backend(:'pid')" -v pid="$pid" >/dev/null
			wait_run
			hook_release
			TERMS=$((TERMS + 1))
			assert_eq "$RUN_RC" 1 "exit code of job run after its backend was terminated mid-step (round $i)"
			grep -qi "connection\|terminat" "$RUN_ERR" || fail "round $i: no connection error on stderr: $(cat "$RUN_ERR")"
			assert_eq "$(job_field "$job" step_no)" "$before" "step_no after a step terminated mid-step (round $i)"
			check_consistent "$job" "terminate round $i (held mid-step)"
		else
			start_run "$job"
			sleep_ms "$(rand "$START_MS" "$max")"
			# Found and terminated in one statement (the CTE keeps the
			# terminate call away from every other backend).
			pid=$(q "WITH a AS MATERIALIZED (
			           SELECT pid FROM crashtest.activity
			            WHERE application_name = 'cleanupctl:job:' || :'job' || ':run' AND state = 'active')
			         SELECT pid FROM a WHERE pg_terminate_backend(pid)" -v job="$job")
			wait_run
			if [ -n "$pid" ] && [ "$(job_field "$job" phase)" != completed ]; then
				TERMS=$((TERMS + 1))
				assert_eq "$RUN_RC" 1 "exit code of job run after its backend was terminated (round $i)"
			fi
			check_consistent "$job" "terminate round $i (random moment)"
		fi
		log "round $i: step $before -> $(job_field "$job" step_no), run exit $RUN_RC${pid:+, backend $pid terminated}"
	done
	log "job $job: $TERMS backends terminated, now at step $(job_field "$job" step_no), phase $(job_field "$job" phase)"
}

# cont_until_exit PID WHAT: lets a process that stops at a C failpoint
# (after each commit) go on (SIGCONT) every time it stops, until it exits
# (at most 60 s); then wait_run collects its status.
cont_until_exit() {
	local t0=$SECONDS st
	while ((SECONDS - t0 < 60)); do
		st=$(proc_state "$1")
		[ -n "$st" ] && [ "$st" != Z ] || return 0
		[ "$st" != T ] || kill -CONT "$1" 2>/dev/null || true
		sleep 0.01
	done
	fail "$2 did not exit within 60 s of being continued"
}

# --- shared ground-truth checks ---

# outside_unchanged LIB SERVER: the rows outside library LIB and server
# SERVER (0: none) are exactly as in crashtest.before.
outside_unchanged() {
	local scope="i.id IN (SELECT id FROM crashtest.before WHERE library_id = :'lib' OR server_id = :'srv')"
	assert_eq "$(q "SELECT count(*) FROM (
		(SELECT i.id, i.library_id, i.external_id FROM inventory.items i WHERE NOT ($scope)
		 EXCEPT SELECT i.id, i.library_id, i.external_id FROM crashtest.before i WHERE NOT ($scope))
		UNION ALL
		(SELECT i.id, i.library_id, i.external_id FROM crashtest.before i WHERE NOT ($scope)
		 EXCEPT SELECT i.id, i.library_id, i.external_id FROM inventory.items i WHERE NOT ($scope))) d" \
		-v lib="$1" -v srv="$2")" 0 "rows outside library $1 and server $2 changed"
}

# parents_after_drain JOB: every delete-library step of JOB comes after the
# last step that visited rows of that library or mutated anything of it
# (claims drained, library dependents drained: D5), and the delete-server
# step comes last; each parent step deleted exactly one parent (S10, S13).
parents_after_drain() {
	assert_eq "$(q "SELECT $(parents_sql)" -v job="$1")" "0 0" \
		"delete-library steps before their library's drain ended or deleting other than one library; delete-server steps not last or deleting other than one server"
}

# parents_sql: parents_after_drain's counts of job :'job' as one scalar
# subquery ('0 0' when it holds).
parents_sql() {
	cat <<'EOF_SQL'
(SELECT count(*) FILTER (WHERE p.action = 'delete-library'
           AND (p.libraries_deleted <> 1 OR p.parent_lock_ms IS NULL OR EXISTS (
                SELECT 1 FROM cleanup.job_steps d
                 WHERE d.job_id = p.job_id AND d.library_id = p.library_id
                   AND (d.visited > 0 OR d.mutations > 0) AND d.step_no > p.step_no)))
         || ' ' || count(*) FILTER (WHERE p.action = 'delete-server'
           AND (p.servers_deleted <> 1 OR p.step_no <> (SELECT max(step_no) FROM cleanup.job_steps
                                                         WHERE job_id = p.job_id)))
   FROM cleanup.job_steps p WHERE p.job_id = :'job')
EOF_SQL
}

# check_replay_engine JOB: S8 through the engine's own retry path, in one
# session: cleanup.job_step(JOB, N) of every committed step N (what a
# runner whose answer got lost sends) returns the recorded row unchanged,
# and the job row, its steps and the inventory are the same before and
# after; then `job step JOB --replay LAST` (the CLI's path) returns the
# recorded counts of the last step (mutations by kind and claims
# included), marked replayed. (check_replay replays every step through the
# CLI: the soak tests.) The CLI's answer is compared in SQL (no jq: see
# job_create).
check_replay_engine() {
	local job=$1 n r
	r=$(q "CREATE TEMP TABLE h AS SELECT 1 AS k, md5(j::text) || ':' || (SELECT count(*) FROM inventory.items) || ':' ||
	          (SELECT md5(string_agg(s::text, ',' ORDER BY step_no)) FROM cleanup.job_steps s WHERE job_id = j.id) AS v
	         FROM cleanup.jobs j WHERE id = :'job';
	       SELECT count(*) || ' ' || count(*) FILTER (WHERE r IS NOT DISTINCT FROM s)
	         FROM cleanup.job_steps s, LATERAL cleanup.job_step(s.job_id, s.step_no) r WHERE s.job_id = :'job';
	       INSERT INTO h SELECT 2, md5(j::text) || ':' || (SELECT count(*) FROM inventory.items) || ':' ||
	          (SELECT md5(string_agg(s::text, ',' ORDER BY step_no)) FROM cleanup.job_steps s WHERE job_id = j.id)
	         FROM cleanup.jobs j WHERE id = :'job';
	       SELECT count(DISTINCT v) FROM h;
	       SELECT step_no FROM cleanup.jobs WHERE id = :'job'" -v job="$job" | tr '\n' ' ')
	n=${r% }
	n=${n##* }
	assert_eq "$r" "$n $n 1 $n " \
		"replays of the $n committed steps of job $job (steps, identical to the record; distinct states before/after)"
	"$CLEANUPCTL" --db "$CONN" --json job step "$job" --replay "$n" >"$CRASH_TMP/replay.json" ||
		fail "job step $job --replay $n exited $?"
	assert_eq "$(q "SELECT CASE WHEN got = want THEN 'same' ELSE got::text || ' <> ' || want::text END
	                  FROM (SELECT ARRAY[x->>'replayed', x->>'step_no', x->>'action', x->>'examined', x->>'visited',
	                                     x->>'deleted', x->>'moved', x->>'absent', x->>'retained', x->>'kept',
	                                     x->>'libraries_deleted', x->>'servers_deleted', x->>'mutations',
	                                     x->'mutations_by_kind'->>'item_retries',
	                                     x->'mutations_by_kind'->>'identity_review_previews',
	                                     x->'mutations_by_kind'->>'library_collections',
	                                     x->'mutations_by_kind'->>'library_sync_status',
	                                     x->'mutations_by_kind'->>'classification_history_detached',
	                                     x->'claims'->>'claimed', x->'claims'->>'released', x->'claims'->>'in_flight'] AS got,
	                               ARRAY['true', s.step_no::text, s.action, s.examined::text, s.visited::text,
	                                     s.deleted::text, s.moved::text, s.absent::text, s.retained::text, s.kept::text,
	                                     s.libraries_deleted::text, s.servers_deleted::text, s.mutations::text,
	                                     s.retries_deleted::text, s.previews_deleted::text, s.collections_deleted::text,
	                                     s.sync_status_deleted::text, s.history_detached::text,
	                                     s.claimed::text, s.released::text, s.claims_in_flight::text] AS want
	                          FROM (SELECT (:'r'::jsonb)->'steps'->0 AS x) r, cleanup.job_steps s
	                         WHERE s.job_id = :'job' AND s.step_no = :'n') c" \
		-v r="$(<"$CRASH_TMP/replay.json")" -v job="$job" -v n="$n")" same \
		"job step $job --replay $n against the record"
}

# inventory_hash: the whole inventory (id, library) as one value, to show
# that a transaction lost in a crash left no trace.
inventory_hash() {
	q "SELECT count(*) || ':' || md5(coalesce(string_agg(id || '/' || library_id, ',' ORDER BY id), ''))
	     FROM inventory.items"
}

# job_hash JOB: the job row, its step records and its manifest as one value.
job_hash() { q "SELECT $(job_hash_sql)" -v job="$1"; }

# job_hash_sql: job_hash of job :'job' as one scalar subquery.
job_hash_sql() {
	echo "(SELECT md5(j::text) || ':' ||
	          (SELECT count(*) || '/' || coalesce(max(step_no), 0) FROM cleanup.job_steps WHERE job_id = j.id) || ':' ||
	          (SELECT count(*) FROM cleanup.manifest WHERE job_id = j.id)
	     FROM cleanup.jobs j WHERE id = :'job')"
}

# --- a server of the test's own, for pg_ctl stop -m immediate ---

# private_sandbox NAME: starts a PostgreSQL sandbox of this test only
# (CLEANUP_BINARY_DIR/crash-sb-NAME; stopped and removed at exit), so that
# crashing it never takes down the shared test server the tests running in
# parallel use; CLEANUP_TEST_SANDBOX points at it afterwards (crash_init
# then creates its database there). Sets PG_CTL, PGDATA_DIR, RUN_AS.
private_sandbox() {
	local info
	PRIVATE_SANDBOX="${CLEANUP_BINARY_DIR:-$CRASH_TMP}/crash-sb-$1"
	CLEANUP_TEST_SANDBOX=$PRIVATE_SANDBOX
	"$CLEANUPCTL" --quiet sandbox start --dir "$PRIVATE_SANDBOX" >/dev/null ||
		fail "cannot start the private sandbox $PRIVATE_SANDBOX"
	info=$("$CLEANUPCTL" --json sandbox status --dir "$PRIVATE_SANDBOX")
	PG_CTL="$(jq -r .bindir <<<"$info")/pg_ctl"
	PGDATA_DIR=$(jq -r .datadir <<<"$info")
	RUN_AS=$(jq -r .run_as <<<"$info")
	# The WAL writer flushes asynchronous commits every 10 s instead of
	# every 200 ms: what a crash may lose (the tests allow it) then is lost
	# in most crashes, instead of in a few.
	"$(jq -r .bindir <<<"$info")/psql" -X -q -v ON_ERROR_STOP=1 \
		"host=$(jq -r .socket_dir <<<"$info") port=$(jq -r .port <<<"$info") dbname=postgres user=postgres" \
		-c "ALTER SYSTEM SET wal_writer_delay = '10s'" -c "SELECT pg_reload_conf()" >/dev/null ||
		fail "cannot set wal_writer_delay on the private sandbox"
}

# server_stop_immediate: pg_ctl stop -m immediate of the private sandbox (as
# the server's user): a crash, no checkpoint; every session is cut.
server_stop_immediate() {
	[ -n "$PRIVATE_SANDBOX" ] || fail "server_stop_immediate needs private_sandbox (the shared server serves other tests)"
	if [ "$(id -u)" -eq 0 ]; then
		su "$RUN_AS" -s /bin/sh -c "$(printf '%q ' "$PG_CTL" -D "$PGDATA_DIR" -w stop -m immediate)" >/dev/null ||
			fail "pg_ctl stop -m immediate failed"
	else
		"$PG_CTL" -D "$PGDATA_DIR" -w stop -m immediate >/dev/null || fail "pg_ctl stop -m immediate failed"
	fi
}

# server_start: starts the private sandbox again; the start runs crash
# recovery from the WAL.
server_start() {
	"$CLEANUPCTL" --quiet sandbox start --dir "$CLEANUP_TEST_SANDBOX" >/dev/null ||
		fail "restarting the server after pg_ctl stop -m immediate"
}

# checkpoint_before_crash: a CHECKPOINT of the private server, so that the
# recovery after the coming crash replays only the WAL written after it
# (seconds less per crash on a busy machine). Taken while nothing under
# test runs: during a run it would make asynchronous commits durable and
# hide what a crash may lose.
checkpoint_before_crash() {
	[ -z "$PRIVATE_SANDBOX" ] || q "CHECKPOINT" >/dev/null
}

# crash_server: pg_ctl stop -m immediate, then start again.
crash_server() {
	server_stop_immediate
	server_start
}

# --- named failpoints (sql/functions/012_failpoints.sql) ---

# fp_key POINT: the advisory-lock key of failpoint POINT.
fp_key() { q "SELECT cleanup.failpoint_key(:'p')" -v p="$1"; }

# fp_lock_sql GRANTED: a condition on pg_locks l: the advisory lock of key
# :'key' in database :'db', granted or waited for.
fp_lock_sql() {
	echo "l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted = $1
	      AND ((l.classid::bigint << 32) | l.objid::bigint) = :'key'
	      AND l.database = (SELECT oid FROM pg_database WHERE datname = :'db')"
}

# fp_hold POINT [DBNAME]: holds failpoint POINT's advisory lock in a session
# of its own (application_name crash-fp-hold) in database DBNAME (default:
# the test database) until fp_release: every session that switched POINT on
# (cleanup.failpoints) stops there. Several points may be held at once. The
# key comes from the test database, so DBNAME need not have the schema yet
# (install). Sets FP_DB and FP_KEYS[POINT].
declare -A FP_KEYS=()
FP_HOLD_PIDS=()
fp_hold() {
	local point=$1 pid
	FP_DB=${2:-$DB}
	FP_KEYS[$point]=$(fp_key "$point")
	PGAPPNAME=crash-fp-hold psql -X -q -v ON_ERROR_STOP=1 "${CONN/dbname=$DB /dbname=$FP_DB }" \
		-c "SELECT pg_advisory_lock(${FP_KEYS[$point]})" -c "SELECT pg_sleep(3600)" >/dev/null 2>&1 &
	pid=$!
	FP_HOLD_PIDS+=("$pid")
	CRASH_BG_PIDS+=("$pid")
	wait_for "SELECT count(*) FROM pg_locks l WHERE $(fp_lock_sql true)" 1 "failpoint $point's lock to be held" \
		-v key="${FP_KEYS[$point]}" -v db="$FP_DB"
}

# fp_release: ends every holding session of FP_DB; the locks go with them
# (after a server crash the sessions are gone already).
fp_release() {
	local pid
	q "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
	    WHERE application_name = 'crash-fp-hold' AND datname = :'db'" -v db="$FP_DB" >/dev/null
	for pid in "${FP_HOLD_PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	FP_HOLD_PIDS=()
	wait_for "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'crash-fp-hold' AND datname = :'db'" 0 \
		"the failpoint holders to end" -v db="$FP_DB"
}

# fp_waiter PID WHAT POINT [APPNAME]: waits (observing pg_locks and
# pg_blocking_pids, at most 60 s) until a backend (of application_name
# APPNAME, when given) waits for held failpoint POINT's lock, blocked by
# the holder, and prints that backend's pid. Fails when process PID (the
# command under test, described as WHAT) ends first: the point was not
# reached (a missing or misplaced failpoint).
fp_waiter() {
	local watch=$1 what=$2 point=$3 app=${4:-} pid t0=$SECONDS
	while ((SECONDS - t0 < 60)); do
		pid=$(q "SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a USING (pid)
		          WHERE $(fp_lock_sql false) AND cardinality(pg_blocking_pids(l.pid)) > 0
		            AND (:'app' = '' OR a.application_name = :'app') LIMIT 1" \
			-v key="${FP_KEYS[$point]}" -v db="$FP_DB" -v app="$app")
		if [ -n "$pid" ]; then
			echo "$pid"
			return 0
		fi
		if ! kill -0 "$watch" 2>/dev/null; then
			fail "$what ended without reaching failpoint $point"
		fi
		sleep 0.01
	done
	fail "$what: no backend waited at failpoint $point within 60 s"
}

# backend_gone PID WHAT: waits (at most 60 s) until backend PID has ended.
backend_gone() {
	wait_for "SELECT count(*) FROM pg_stat_activity WHERE pid = :'pid'" 0 "$2" -v pid="$1"
}

# proc_state PID: the state letter of process PID (/proc/PID/stat), empty
# when it is gone.
proc_state() { sed -E 's/^[0-9]+ \(.*\) ([A-Za-z]) .*/\1/' "/proc/$1/stat" 2>/dev/null || true; }

# wait_stopped PID WHAT [N ERRFILE]: waits (at most 60 s) until process PID
# is stopped (state T: it reached a C failpoint, which raises SIGSTOP), and
# with N and ERRFILE, until its stderr ERRFILE says it reached a failpoint
# N times (it stops at each; SIGCONT lets it go on to the next). Fails when
# it ends first.
wait_stopped() {
	local t0=$SECONDS st
	while ((SECONDS - t0 < 60)); do
		st=$(proc_state "$1")
		if [ "$st" = T ] && { [ -z "${3:-}" ] || [ "$(grep -c 'failpoint .* reached' "$4")" -ge "$3" ]; }; then
			return 0
		fi
		[ -n "$st" ] && [ "$st" != Z ] || fail "$2 ended without reaching its C failpoint"
		sleep 0.01
	done
	fail "$2 did not stop at its C failpoint within 60 s"
}
