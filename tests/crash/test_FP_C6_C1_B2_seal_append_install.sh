#!/bin/bash
# C6 (sealing is one transaction: the fence and the phase change commit
# together), C1 (an append call is one transaction: its IDs and the job's
# count together), B2 (the installer is one transaction): `job seal`, `job
# append` and `install` are held at their named failpoints (seal: library
# fenced, job not yet draining; append: IDs inserted, count not yet
# updated; install: everything applied, before COMMIT) and then
#   kill9        the client is killed; its backend does not notice while it
#                waits (client_connection_check_interval = 0): released, a
#                seal or an append call (one statement each) commits whole,
#                the installer (BEGIN ... COMMIT, its COMMIT never sent)
#                rolls back whole;
#   kill9-check  the client is killed with client_connection_check_interval
#                set: the backend notices while it waits and rolls back;
#   terminate    its backend is terminated (pg_terminate_backend);
#   immediate    the server crashes (pg_ctl stop -m immediate) and restarts.
# A transaction lost is lost whole (job row, manifest, fence, schema as
# before) and a retry succeeds; one committed is whole and its retry
# changes nothing. Each prune then runs to its exact ground truth. The
# crashes need a server of their own: a private sandbox.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/matrix.sh"
private_sandbox fp_ctl
crash_init fp_seal_append_install
matrix_data

# fp_oneshot_kill KILL PID WHAT: kills the held command (RUN_PID) or its
# backend PID per KILL (above), then releases the point. Sets LOST (1: the
# held transaction cannot have committed).
fp_oneshot_kill() {
	local kill=$1 pid=$2 what=$3
	LOST=1
	case $kill in
	kill9 | kill9-check)
		kill -9 "$RUN_PID"
		wait_run
		assert_eq "$RUN_RC" 137 "exit status of $what, killed"
		if [ "$kill" = kill9 ]; then
			assert_eq "$(q "SELECT count(*) FROM pg_stat_activity WHERE pid = :'pid'" -v pid="$pid")" 1 \
				"the orphaned backend of $what still there"
			fp_release
			LOST=0
		fi
		backend_gone "$pid" "the backend of the killed $what to end"
		[ "$kill" = kill9 ] || fp_release
		;;
	terminate)
		q "SELECT pg_terminate_backend(:'pid')" -v pid="$pid" >/dev/null
		wait_run
		assert_eq "$RUN_RC" 1 "exit of $what whose backend was terminated"
		fp_release
		;;
	immediate)
		server_stop_immediate
		wait_run
		server_start
		assert_eq "$RUN_RC" 1 "exit of $what whose server crashed"
		fp_release
		;;
	*) fail "unknown kill $kill" ;;
	esac
}

# fp_opts POINT KILL: the PGOPTIONS of the command under test.
fp_opts() {
	local check=0
	[ "$2" = kill9-check ] && check=100ms
	echo "-c cleanup.failpoints=$1 -c client_connection_check_interval=$check"
}

# admission_hash LIB: library LIB's admission row (state, fence) as one value.
admission_hash() { q "SELECT md5(a::text) FROM cleanup.library_admission a WHERE library_id = :'l'" -v l="$1"; }

# seal_cell KILL: C6.
seal_cell() {
	local kill=$1 jh ah pid rc
	fp_job prune collecting
	"$CLEANUPCTL" --db "$CONN" --quiet job append "$JOB" <"$CRASH_TMP/seen.$JOB" >/dev/null || fail "append $JOB"
	jh=$(job_hash "$JOB")
	ah=$(admission_hash "$TARGET")
	[ "$kill" != immediate ] || checkpoint_before_crash
	fp_hold seal
	PGOPTIONS=$(fp_opts seal "$kill") fp_start "$CLEANUPCTL" --db "$CONN" --quiet job seal "$JOB" --expected "$SEEN"
	pid=$(fp_waiter "$RUN_PID" "job seal $JOB" seal)
	fp_oneshot_kill "$kill" "$pid" "job seal $JOB"
	if ((LOST)); then
		assert_eq "$(job_hash "$JOB") $(admission_hash "$TARGET")" "$jh $ah" \
			"job $JOB, its manifest and the admission of library $TARGET after the seal was lost ($kill)"
		assert_eq "$(job_field "$JOB" phase)" collecting "phase of job $JOB after the seal was lost ($kill)"
		"$CLEANUPCTL" --db "$CONN" --quiet job seal "$JOB" --expected "$SEEN" >/dev/null ||
			fail "retrying the seal of job $JOB after $kill: exit $?"
	else
		assert_eq "$(job_field "$JOB" "phase || ' ' || manifest_count || ' ' || expected_count")" "draining $SEEN $SEEN" \
			"job $JOB after its orphaned seal committed ($kill)"
		[ "$(admission_hash "$TARGET")" != "$ah" ] || fail "library $TARGET not fenced by the committed seal"
		jh=$(job_hash "$JOB")
		rc=0
		"$CLEANUPCTL" --db "$CONN" --quiet job seal "$JOB" --expected "$SEEN" >/dev/null 2>&1 || rc=$?
		assert_eq "$rc" 4 "exit of a second seal of job $JOB (already sealed)"
		assert_eq "$(job_hash "$JOB")" "$jh" "job $JOB after the refused second seal"
	fi
	assert_eq "$(job_field "$JOB" phase)" draining "phase of job $JOB after the retry"
	resume "$JOB"
	fp_job_exact prune "$JOB" "$TARGET"
	log "cell seal x $kill: $( ((LOST)) && echo "lost whole, retried" || echo "committed whole, retry refused"); job $JOB exact"
}

# append_cell KILL: C1. The held call appends the manifest's last 100 IDs
# (one call: at most 128 IDs) after the others were appended.
append_cell() {
	local kill=$1 jh pid n
	fp_job prune collecting
	n=$((SEEN - 100))
	head -n "$n" "$CRASH_TMP/seen.$JOB" | "$CLEANUPCTL" --db "$CONN" --quiet job append "$JOB" >/dev/null ||
		fail "append $JOB"
	tail -n 100 "$CRASH_TMP/seen.$JOB" >"$CRASH_TMP/rest.$JOB"
	jh=$(job_hash "$JOB")
	[ "$kill" != immediate ] || checkpoint_before_crash
	fp_hold append
	PGOPTIONS=$(fp_opts append "$kill") FP_STDIN=$CRASH_TMP/rest.$JOB \
		fp_start "$CLEANUPCTL" --db "$CONN" --quiet job append "$JOB"
	pid=$(fp_waiter "$RUN_PID" "job append $JOB" append)
	fp_oneshot_kill "$kill" "$pid" "job append $JOB"
	if ((LOST)); then
		assert_eq "$(job_hash "$JOB")" "$jh" "job $JOB and its manifest after the append call was lost ($kill)"
		assert_eq "$(job_field "$JOB" manifest_count)" "$n" "manifest_count of job $JOB after the lost append"
	else
		assert_eq "$(job_field "$JOB" manifest_count) $(q "SELECT count(*) FROM cleanup.manifest WHERE job_id = :'j'" \
			-v j="$JOB")" "$SEEN $SEEN" "manifest_count and manifest of job $JOB after its orphaned append committed"
	fi
	"$CLEANUPCTL" --db "$CONN" --quiet job append "$JOB" <"$CRASH_TMP/rest.$JOB" >/dev/null ||
		fail "retrying the append to job $JOB after $kill: exit $?"
	assert_eq "$(job_field "$JOB" manifest_count) $(q "SELECT count(*) FROM cleanup.manifest WHERE job_id = :'j'" \
		-v j="$JOB")" "$SEEN $SEEN" "manifest_count and manifest of job $JOB after the retry"
	"$CLEANUPCTL" --db "$CONN" --quiet job seal "$JOB" --expected "$SEEN" >/dev/null || fail "seal $JOB"
	resume "$JOB"
	fp_job_exact prune "$JOB" "$TARGET"
	log "cell append x $kill: $( ((LOST)) && echo "lost whole" || echo "committed whole"), retried; job $JOB exact"
}

# install_cell KILL: B2, into a fresh database.
install_cell() {
	local kill=$1 idb iconn pid
	idb=cleanup_lab_t_crash_fpi_${kill//-/_}
	iconn=${CONN/dbname=$DB /dbname=$idb }
	PGOPTIONS='-c client_min_messages=warning' psql -X -q "$ADMIN" -v ON_ERROR_STOP=1 \
		-c "DROP DATABASE IF EXISTS $idb WITH (FORCE)" -c "CREATE DATABASE $idb" >/dev/null
	[ "$kill" != immediate ] || checkpoint_before_crash
	fp_hold install "$idb"
	PGOPTIONS=$(fp_opts install "$kill") fp_start "$CLEANUPCTL" --db "$iconn" --quiet install
	pid=$(fp_waiter "$RUN_PID" "install into $idb" install)
	fp_oneshot_kill "$kill" "$pid" "install into $idb"
	# Whatever the kill, the installer's COMMIT was never sent.
	assert_eq "$(psql -X -q -At "$iconn" -c "SELECT count(*) FROM pg_namespace WHERE nspname IN ('cleanup', 'inventory')")" 0 \
		"schemas of $idb after the install was lost ($kill)"
	"$CLEANUPCTL" --db "$iconn" --quiet install >/dev/null || fail "retrying the install into $idb after $kill: exit $?"
	assert_eq "$(psql -X -q -At "$iconn" -c "SELECT version FROM cleanup.schema_info")" \
		"$(q "SELECT version FROM cleanup.schema_info")" "schema version of $idb after the retry"
	psql -X -q "$ADMIN" -c "DROP DATABASE $idb WITH (FORCE)" >/dev/null
	log "cell install x $kill: lost whole, retried"
}

for kill in kill9 kill9-check terminate immediate; do
	seal_cell "$kill"
	append_cell "$kill"
	install_cell "$kill"
done
fp_inventory_exact
log "PASS: seal, append and install are lost whole or committed whole at their failpoints; retries succeed"
