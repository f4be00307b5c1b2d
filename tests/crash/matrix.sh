# The failpoint crash matrix (docs/testing.md), sourced by tests/crash/test_FP_*.sh
# after lib.sh. One cell: a job of one kind (prune, remove-library,
# remove-server) on a target of its own, a failpoint of the step engine
# switched on for the runner's session (cleanup.failpoints), the runner held
# there and observed waiting on the point's lock, one kill (kill -9 of the
# runner, pg_terminate_backend of its backend, pg_ctl stop -m immediate of
# the server), the state right after the kill checked (the held step lost
# whole, or committed once by its orphaned backend), then a resume from a new
# process and the exact end state: every counter of the job, its step
# records, the whole inventory against the ground truth (crashtest.gone: the
# rows the jobs of this database must delete, nothing else), parents deleted
# only after their drain, and a replay of every committed step that returns
# the recorded counts and changes nothing.
#
# Data: 14 servers x 2 libraries x CRASH_FP_ITEMS (300) items. One job per
# server at a time (the engine's rule) and all cells of a kill held at once:
# prune and remove-library cells take the first library of servers 1-10
# (the second one stays, untouched), remove-server cells take servers 11-14.

FP_ITEMS=${CRASH_FP_ITEMS:-300}

# matrix_data: seeds the data, records the ground truth (crashtest.before,
# crashtest.gone) and the free targets.
matrix_data() {
	local libs srvs
	q "SELECT cleanup.seed_demo(14, 2, :'n')" -v n="$FP_ITEMS" >/dev/null
	snapshot before
	q "CREATE TABLE crashtest.gone (id bigint PRIMARY KEY)"
	libs=$(q "SELECT string_agg(min::text, ' ' ORDER BY min) FROM (
	            SELECT min(l.id) FROM inventory.libraries l
	             WHERE l.server_id IN (SELECT id FROM inventory.media_servers ORDER BY id LIMIT 10)
	             GROUP BY l.server_id) f")
	srvs=$(q "SELECT string_agg(id::text, ' ' ORDER BY id) FROM (
	            SELECT id FROM inventory.media_servers ORDER BY id OFFSET 10) s")
	read -ra FREE_LIBS <<<"$libs"
	read -ra FREE_SERVERS <<<"$srvs"
}

# fp_job KIND [collecting]: a job of KIND on the next free target, its
# ground truth added to crashtest.gone. A prune job's manifest holds the
# even ids of its library (odd ones are unseen: deleted) and 20 IDs the
# library does not hold; it is sealed unless the second argument says
# collecting. Sets JOB, TARGET, SEEN (the prune's manifest size).
fp_job() {
	local kind=$1
	case $kind in
	prune | remove-library)
		((${#FREE_LIBS[@]} > 0)) || fail "no free library left for a $kind cell"
		TARGET=${FREE_LIBS[0]}
		FREE_LIBS=("${FREE_LIBS[@]:1}")
		;;
	remove-server)
		((${#FREE_SERVERS[@]} > 0)) || fail "no free server left for a $kind cell"
		TARGET=${FREE_SERVERS[0]}
		FREE_SERVERS=("${FREE_SERVERS[@]:1}")
		;;
	esac
	JOB=$(job_create "$kind" "$TARGET")
	[ -n "$JOB" ] && [ "$JOB" != null ] || fail "job create $kind on $TARGET failed"
	case $kind in
	prune)
		q "INSERT INTO crashtest.gone SELECT id FROM crashtest.before WHERE library_id = :'t' AND id % 2 = 1" \
			-v t="$TARGET"
		q "SELECT external_id FROM crashtest.before WHERE library_id = :'t' AND id % 2 = 0
		   UNION ALL SELECT 'absent-' || :'t' || '-' || g FROM generate_series(1, 20) g" -v t="$TARGET" \
			>"$CRASH_TMP/seen.$JOB"
		SEEN=$(wc -l <"$CRASH_TMP/seen.$JOB")
		if [ "${2:-}" != collecting ]; then
			"$CLEANUPCTL" --db "$CONN" --quiet job append "$JOB" <"$CRASH_TMP/seen.$JOB" >/dev/null ||
				fail "job append $JOB"
			"$CLEANUPCTL" --db "$CONN" --quiet job seal "$JOB" --expected "$SEEN" >/dev/null || fail "job seal $JOB"
		fi
		;;
	remove-library)
		q "INSERT INTO crashtest.gone SELECT id FROM crashtest.before WHERE library_id = :'t'" -v t="$TARGET"
		;;
	remove-server)
		q "INSERT INTO crashtest.gone SELECT id FROM crashtest.before WHERE server_id = :'t'" -v t="$TARGET"
		;;
	esac
}

# fp_job_exact KIND JOB TARGET: JOB completed with exactly the counters its
# ground truth gives, its step records add up to them, its parents went
# after their drain (and nothing else of the target's is left), the rows of
# its target are the ground truth's, and replaying every committed step
# returns the record and changes nothing. (The whole inventory:
# fp_inventory_exact, once every job has ended.) One query names every
# check that does not hold.
fp_job_exact() {
	local kind=$1 job=$2 t=$3 scope=library_id checks bad
	check_consistent "$job" "$kind job $job at the end"
	case $kind in
	prune)
		checks="('counters: deleted = visited = unseen rows, kept = seen rows, examined = all rows',
		          j.deleted = g.gone AND j.visited = g.gone AND j.kept = g.stay AND j.examined = g.total
		          AND j.moved + j.absent + j.retained = 0 AND j.libraries_deleted = 0 AND j.servers_deleted = 0),
		        ('admission of the library open again',
		          (SELECT state = 'open' FROM cleanup.library_admission WHERE library_id = :'t')),
		        ('library_stats item count',
		          (SELECT item_count FROM cleanup.library_stats WHERE library_id = :'t') =
		          (SELECT count(*) FROM inventory.items WHERE library_id = :'t'))"
		;;
	remove-library)
		checks="('counters: deleted = visited = its rows, one library, nothing else',
		          j.deleted = g.total AND j.visited = g.total AND g.stay = 0 AND j.libraries_deleted = 1
		          AND j.servers_deleted = 0 AND j.moved + j.absent + j.retained + j.kept = 0),
		        ('library row and admission row gone',
		          NOT EXISTS (SELECT 1 FROM inventory.libraries WHERE id = :'t')
		          AND NOT EXISTS (SELECT 1 FROM cleanup.library_admission WHERE library_id = :'t'))"
		;;
	remove-server)
		scope=server_id
		checks="('counters: deleted = visited = its rows, two libraries and the server, nothing else',
		          j.deleted = g.total AND j.visited = g.total AND g.stay = 0 AND j.libraries_deleted = 2
		          AND j.servers_deleted = 1 AND j.moved + j.absent + j.retained + j.kept = 0),
		        ('server row, its libraries and its admission row gone',
		          NOT EXISTS (SELECT 1 FROM inventory.media_servers WHERE id = :'t')
		          AND NOT EXISTS (SELECT 1 FROM inventory.libraries WHERE server_id = :'t')
		          AND NOT EXISTS (SELECT 1 FROM cleanup.server_admission WHERE server_id = :'t')),
		        ('parent steps: delete-library twice, then delete-server',
		          (SELECT string_agg(action, ' ' ORDER BY step_no) FROM cleanup.job_steps
		            WHERE job_id = :'job' AND action LIKE 'delete-%') = 'delete-library delete-library delete-server')"
		;;
	esac
	bad=$(q "WITH b AS (SELECT * FROM crashtest.before WHERE $scope = :'t'),
	              g AS (SELECT count(*) FILTER (WHERE id IN (SELECT id FROM crashtest.gone)) AS gone,
	                           count(*) FILTER (WHERE id NOT IN (SELECT id FROM crashtest.gone)) AS stay,
	                           count(*) AS total FROM b)
	         SELECT string_agg(name, '; ') FROM (
	           SELECT v.* FROM cleanup.jobs j, g, LATERAL (VALUES
	             ('phase completed', j.phase = 'completed'),
	             ('rows of the target: exactly those the ground truth keeps, unchanged',
	               (SELECT count(*) FROM inventory.items i JOIN b USING (id)
	                 WHERE i.library_id = b.library_id AND i.external_id = b.external_id) = g.stay
	               AND NOT EXISTS (SELECT 1 FROM inventory.items i JOIN crashtest.gone USING (id) JOIN b USING (id))),
	             $checks) v(name, ok)
	            WHERE j.id = :'job') v WHERE ok IS NOT TRUE" -v job="$job" -v t="$t")
	if [ -n "$bad" ]; then
		q "SELECT * FROM cleanup.jobs WHERE id = :'job'" -v job="$job" >&2
		fail "$kind job $job on $t differs from its ground truth: $bad"
	fi
	parents_after_drain "$job"
	check_replay_engine "$job"
}

# fp_inventory_exact: the whole inventory is the ground truth: no row of a
# target that should stay went, no row outside the targets changed.
fp_inventory_exact() {
	assert_inventory_is "id NOT IN (SELECT id FROM crashtest.gone)" "the inventory differs from the ground truth"
	log "the whole inventory equals the ground truth"
}

# fp_advance JOB N: N steps with synchronous commit (durable whatever
# crashes later), from a process of their own.
fp_advance() {
	local job=$1 n=$2
	((n > 0)) || return 0
	"$CLEANUPCTL" --db "$CONN" --quiet job run "$job" --max-steps "$n" --synchronous-commit on >/dev/null ||
		fail "advancing job $job by $n steps"
}

# fp_advance_to_finalizing JOB: synchronous steps until the job's drain is
# over (phase finalizing: the next step deletes a parent).
fp_advance_to_finalizing() {
	local job=$1 i
	for ((i = 0; i < 100; i++)); do
		[ "$(job_field "$job" phase)" = draining ] || return 0
		fp_advance "$job" 1
	done
	fail "job $job still draining after 100 steps"
}

# fp_advance_to_server_delete JOB SERVER: one synchronous step at a time
# until SERVER has no library left (the next step deletes the server).
fp_advance_to_server_delete() {
	local job=$1 s=$2 i
	for ((i = 0; i < 100; i++)); do
		[ "$(q "SELECT count(*) FROM inventory.libraries WHERE server_id = :'s'" -v s="$s")" = 0 ] && return 0
		fp_advance "$job" 1
	done
	fail "server $s still has libraries after 100 steps of job $job"
}

# target_hash KIND TARGET: the rows of TARGET's scope in the ground truth
# that are still there, and TARGET's parent rows, as one value.
target_hash() {
	local col=library_id parents="SELECT count(*) FROM inventory.libraries WHERE id = :'t'"
	if [ "$1" = remove-server ]; then
		col=server_id
		parents="SELECT count(*) FROM inventory.libraries WHERE server_id = :'t'"
	fi
	q "SELECT count(*) || ':' || md5(coalesce(string_agg(i.id || '/' || i.library_id, ',' ORDER BY i.id), ''))
	          || ':' || ($parents)
	     FROM inventory.items i JOIN crashtest.before b USING (id) WHERE b.$col = :'t'" -v t="$2"
}

# fp_step_matrix KILL: the twelve cells of the step matrix for KILL, held
# at once and killed together (one server crash for all of them):
#   step_after_discovery, step_after_delete, step_before_commit
#       x prune, remove-library, remove-server: the run's first step, a
#       drain step after one synchronous step;
#   final_check x prune: after the run's own drain steps;
#   step_before_parent_delete x remove-library: the library delete, after
#       the run's own drain steps; x remove-server: the server delete (its
#       libraries deleted by synchronous steps before).
# Each cell's job runs with its point switched on (cleanup.failpoints) and
# is observed waiting on the point's lock; then, per KILL:
#   kill9      each runner dies (exit 137); its backend does not notice while
#              it waits (client_connection_check_interval = 0): a second
#              runner is busy, never a second execution; released, the
#              orphan commits the held step once and then, its reply
#              undeliverable, runs nothing more.
#   terminate  each backend is terminated: the runner exits 1 (connection
#              lost) and the held step left no trace (job row, step records,
#              manifest, the target's rows and parents as before it).
#   immediate  the server crashes (pg_ctl stop -m immediate) and restarts;
#              each runner exits 1; the held step left no trace, and steps
#              the run committed asynchronously before it may be lost, whole,
#              never one before the last synchronous step.
# Then each job is resumed by a new process and must end exact
# (fp_job_exact).
fp_step_matrix() {
	local kill=$1 n i kind point pid rc
	local -a kinds=() points=() jobs=() targets=() base=() before=() jh=() th=() runs=() errs=() pids=()
	for kind in prune remove-library remove-server; do
		for point in step_after_discovery step_after_delete step_before_commit; do
			kinds+=("$kind") points+=("$point")
		done
	done
	kinds+=(prune remove-library remove-server)
	points+=(final_check step_before_parent_delete step_before_parent_delete)
	n=${#kinds[@]}
	for ((i = 0; i < n; i++)); do
		fp_job "${kinds[i]}"
		jobs[i]=$JOB targets[i]=$TARGET
		case ${points[i]} in
		step_after_discovery | step_after_delete | step_before_commit) fp_advance "$JOB" 1 ;;
		step_before_parent_delete) [ "${kinds[i]}" = remove-server ] && fp_advance_to_server_delete "$JOB" "$TARGET" ;;
		esac
		base[i]=$(job_field "$JOB" step_no)
	done
	checkpoint_before_crash
	for point in step_after_discovery step_after_delete step_before_commit final_check step_before_parent_delete; do
		fp_hold "$point"
	done
	for ((i = 0; i < n; i++)); do
		PGOPTIONS="-c cleanup.failpoints=${points[i]} -c client_connection_check_interval=0" start_run "${jobs[i]}"
		runs[i]=$RUN_PID errs[i]=$RUN_ERR
		CRASH_BG_PIDS+=("$RUN_PID")
	done
	for ((i = 0; i < n; i++)); do
		pids[i]=$(fp_waiter "${runs[i]}" "job run ${jobs[i]}" "${points[i]}" "cleanupctl:job:${jobs[i]}:run")
	done
	# The held steps' transactions are invisible: this is the state before
	# them.
	for ((i = 0; i < n; i++)); do
		before[i]=$(job_field "${jobs[i]}" step_no)
		jh[i]=$(job_hash "${jobs[i]}")
		th[i]=$(target_hash "${kinds[i]}" "${targets[i]}")
	done
	log "$n jobs held at their failpoints; now: $kill"
	case $kill in
	kill9)
		for ((i = 0; i < n; i++)); do
			RUN_PID=${runs[i]} RUN_ERR=${errs[i]}
			kill -9 "$RUN_PID"
			wait_run
			assert_eq "$RUN_RC" 137 "exit status of job run ${jobs[i]} killed at ${points[i]}"
			assert_eq "$(q "SELECT count(*) FROM pg_locks l WHERE l.pid = :'pid' AND $(fp_lock_sql false)" \
				-v pid="${pids[i]}" -v key="${FP_KEYS[${points[i]}]}" -v db="$FP_DB")" 1 \
				"the orphaned backend ${pids[i]} of job ${jobs[i]} still waiting at ${points[i]}"
			rc=0
			"$CLEANUPCTL" --db "$CONN" --quiet job step "${jobs[i]}" >/dev/null 2>"$CRASH_TMP/second.err" || rc=$?
			assert_eq "$rc" 3 "exit of a second runner of job ${jobs[i]} while its orphaned step is in flight (busy)"
			assert_eq "$(job_hash "${jobs[i]}")" "${jh[i]}" "job ${jobs[i]} after the busy second runner"
		done
		fp_release
		for ((i = 0; i < n; i++)); do
			backend_gone "${pids[i]}" "the orphaned backend ${pids[i]} of job ${jobs[i]} to finish"
			assert_eq "$(job_field "${jobs[i]}" step_no)" $((before[i] + 1)) \
				"step_no of job ${jobs[i]} after its orphaned backend finished the step held at ${points[i]} (once, nothing more)"
		done
		;;
	terminate)
		for ((i = 0; i < n; i++)); do
			RUN_PID=${runs[i]} RUN_ERR=${errs[i]}
			q "SELECT pg_terminate_backend(:'pid')" -v pid="${pids[i]}" >/dev/null
			wait_run
			assert_eq "$RUN_RC" 1 "exit of job run ${jobs[i]} whose backend was terminated at ${points[i]}"
			grep -qi "connection\|terminat" "$RUN_ERR" ||
				fail "no connection error from job run ${jobs[i]}: $(cat "$RUN_ERR")"
		done
		fp_release
		;;
	immediate)
		server_stop_immediate
		for ((i = 0; i < n; i++)); do
			RUN_PID=${runs[i]} RUN_ERR=${errs[i]}
			wait_run
			assert_eq "$RUN_RC" 1 "exit of job run ${jobs[i]} whose server crashed at ${points[i]}"
		done
		server_start
		fp_release
		;;
	*) fail "unknown kill $kill" ;;
	esac
	for ((i = 0; i < n; i++)); do
		if [ "$kill" != kill9 ]; then
			rc=$(job_field "${jobs[i]}" step_no)
			if [ "$rc" = "${before[i]}" ]; then
				assert_eq "$(job_hash "${jobs[i]}")" "${jh[i]}" \
					"job ${jobs[i]}, its steps and manifest after $kill at ${points[i]} of step $((rc + 1))"
				assert_eq "$(target_hash "${kinds[i]}" "${targets[i]}")" "${th[i]}" \
					"rows and parents of ${kinds[i]} target ${targets[i]} after $kill at ${points[i]} of step $((rc + 1))"
			elif [ "$kill" = immediate ] && ((rc >= base[i] && rc < before[i])); then
				log "job ${jobs[i]}: the crash took $((before[i] - rc)) asynchronously committed steps with it"
			else
				fail "job ${jobs[i]} at step $rc after $kill at ${points[i]} of step $((before[i] + 1)) (synchronous up to ${base[i]})"
			fi
		fi
		check_consistent "${jobs[i]}" "${kinds[i]} job ${jobs[i]} right after $kill at ${points[i]}"
		resume "${jobs[i]}"
		fp_job_exact "${kinds[i]}" "${jobs[i]}" "${targets[i]}"
		log "cell ${points[i]} x $kill x ${kinds[i]}: job ${jobs[i]} held at step $((before[i] + 1)) (${base[i]} synchronous before), exact after resume"
	done
	fp_inventory_exact
}

# fp_start CMD...: CMD in the background, its stdin from file FP_STDIN
# (default /dev/null), like start_run (RUN_PID, RUN_OUT, RUN_ERR; wait_run
# sets RUN_RC).
fp_start() {
	RUN_OUT=$CRASH_TMP/cmd.$RANDOM.out
	RUN_ERR=$CRASH_TMP/cmd.$RANDOM.err
	"$@" <"${FP_STDIN:-/dev/null}" >"$RUN_OUT" 2>"$RUN_ERR" &
	RUN_PID=$!
}

# runner_backend JOB: the pid of the backend of `job run JOB`, if any.
runner_backend() {
	q "SELECT pid FROM crashtest.activity WHERE application_name = 'cleanupctl:job:' || :'job' || ':run'" -v job="$1"
}

# fp_after_commit_cell KIND KILL: the runner's C failpoint after_commit
# (CLEANUP_FAILPOINTS): `job run` with its defaults (asynchronous commit,
# two steps in flight) stops itself (SIGSTOP, observed as state T) right
# after it was told that a step committed, before it acts on the answer. It
# stops after each commit: the test lets it go on once (SIGCONT), so that it
# stops after its second step, when the pipeline is full; its backend
# finishes what was sent (the next step, if any) and goes idle (observed).
# Then:
#   kill9      the stopped runner is killed: exactly the steps its backend
#              committed remain;
#   terminate  its backend is terminated, the runner continued (SIGCONT):
#              it exits 1 (0 when the answer it had received completed the
#              job) and nothing more is committed;
#   immediate  the server crashes and restarts, the runner continued: it
#              exits 1 (or 0, as above: the completion survives); steps it
#              was told were committed (asynchronously) may be lost, whole,
#              never beyond the last synchronous one.
# A new process resumes; the end state is exact.
fp_after_commit_cell() {
	local kind=$1 kill=$2 base told db now bpid
	fp_job "$kind"
	base=$(job_field "$JOB" step_no)
	told=$((base + 2))
	[ "$kill" != immediate ] || checkpoint_before_crash
	CLEANUP_FAILPOINTS=after_commit start_run "$JOB"
	CRASH_BG_PIDS+=("$RUN_PID")
	wait_stopped "$RUN_PID" "job run $JOB" 1 "$RUN_ERR"
	kill -CONT "$RUN_PID"
	wait_stopped "$RUN_PID" "job run $JOB" 2 "$RUN_ERR"
	wait_for "SELECT count(*) FROM crashtest.activity
	           WHERE application_name = 'cleanupctl:job:' || :'job' || ':run' AND state = 'idle'" 1 \
		"the stopped runner's backend to go idle" -v job="$JOB"
	bpid=$(runner_backend "$JOB")
	db=$(job_field "$JOB" step_no)
	((db == told || db == told + 1)) ||
		fail "job $JOB at step $db with its runner stopped after step $told committed (pipelined: $told or $((told + 1)))"
	case $kill in
	kill9)
		kill -9 "$RUN_PID"
		wait_run
		assert_eq "$RUN_RC" 137 "exit status of the stopped job run $JOB, killed"
		backend_gone "$bpid" "the backend of the killed runner to end"
		assert_eq "$(job_field "$JOB" step_no)" "$db" "step_no of job $JOB after its stopped runner was killed"
		;;
	terminate)
		q "SELECT pg_terminate_backend(:'pid')" -v pid="$bpid" >/dev/null
		backend_gone "$bpid" "the terminated backend to end"
		cont_until_exit "$RUN_PID" "job run $JOB"
		wait_run
		fp_continued_exit "after its backend was terminated"
		assert_eq "$(job_field "$JOB" step_no)" "$db" "step_no of job $JOB after its backend was terminated"
		;;
	immediate)
		server_stop_immediate
		server_start
		cont_until_exit "$RUN_PID" "job run $JOB"
		wait_run
		fp_continued_exit "after the server crashed"
		now=$(job_field "$JOB" step_no)
		((now >= base && now <= db)) ||
			fail "job $JOB at step $now after the crash; expected $base (synchronous) to $db (committed before it)"
		if ((now < told)); then
			log "job $JOB: the runner was told step $told committed; the crash lost it (asynchronous commit)"
		else
			log "job $JOB: $((db - now)) of $((db - base)) asynchronously committed steps lost in the crash"
		fi
		;;
	*) fail "unknown kill $kill" ;;
	esac
	check_consistent "$JOB" "$kind job $JOB after $kill at after_commit"
	resume "$JOB"
	fp_job_exact "$kind" "$JOB" "$TARGET"
	log "cell after_commit x $kill x $kind: job $JOB, runner told step $told, backend at $db, exact after resume"
}

# fp_continued_exit WHEN: the exit of a stopped runner continued after its
# connection was lost (WHEN): 1, or 0 when the answer it read last (already
# received) completed the job, which must then be completed (a completing
# step commits synchronously: a crash cannot take it back).
fp_continued_exit() {
	if [ "$RUN_RC" = 0 ]; then
		jq -e '.completed == true' "$RUN_OUT" >/dev/null ||
			fail "job run $JOB exited 0 $1 without reporting a completion"
		assert_eq "$(job_field "$JOB" phase)" completed "phase of job $JOB whose runner reported completion $1"
		log "job $JOB: its runner read the completing answer before the loss and reported it"
	else
		assert_eq "$RUN_RC" 1 "exit of job run $JOB continued $1"
	fi
}

# fp_sync_commit_cell KIND: a step that deletes a parent commits
# synchronously even in an asynchronous run: the runner, stopped at
# after_commit right after such a step (the library delete that completes a
# remove-library; the first library delete of a remove-server), survives a
# server crash: the parent stays deleted and the job's counters say so.
fp_sync_commit_cell() {
	local kind=$1 at
	fp_job "$kind"
	fp_advance_to_finalizing "$JOB"
	at=$(($(job_field "$JOB" step_no) + 1))
	checkpoint_before_crash
	CLEANUP_FAILPOINTS=after_commit start_run "$JOB"
	CRASH_BG_PIDS+=("$RUN_PID")
	wait_stopped "$RUN_PID" "job run $JOB"
	server_stop_immediate
	server_start
	kill -9 "$RUN_PID"
	wait_run
	assert_eq "$(q "SELECT action || ' ' || libraries_deleted FROM cleanup.job_steps
	                 WHERE job_id = :'job' AND step_no = :'at'" -v job="$JOB" -v at="$at")" "delete-library 1" \
		"step $at of $kind job $JOB (a library delete the runner was told of) after a server crash"
	assert_eq "$(job_field "$JOB" "libraries_deleted")" 1 "libraries_deleted of job $JOB after the crash"
	if [ "$kind" = remove-library ]; then
		assert_eq "$(job_field "$JOB" phase)" completed "phase of job $JOB after the crash that followed its completion"
	fi
	check_consistent "$JOB" "$kind job $JOB after a crash after its parent-deleting step"
	resume "$JOB"
	fp_job_exact "$kind" "$JOB" "$TARGET"
	log "cell after_commit x immediate x $kind (parent-deleting step $at): durable, exact after resume"
}

# fp_reconnect_cell: `job run --reconnect 1` of a prune job whose backend is
# terminated at step_after_delete reconnects by itself, re-reads the
# committed step and runs the lost one again: its new session has the
# point switched on too, so a new backend waits there (observed); released,
# the run completes (exit 0, one reconnect) and the job is exact.
fp_reconnect_cell() {
	local pid pid2 before t0=$SECONDS
	fp_job prune
	fp_advance "$JOB" 1
	fp_hold step_after_delete
	PGOPTIONS="-c cleanup.failpoints=step_after_delete" start_run "$JOB" --reconnect 1
	CRASH_BG_PIDS+=("$RUN_PID")
	pid=$(fp_waiter "$RUN_PID" "job run $JOB --reconnect 1" step_after_delete "cleanupctl:job:$JOB:run")
	before=$(job_field "$JOB" step_no)
	q "SELECT pg_terminate_backend(:'pid')" -v pid="$pid" >/dev/null
	while :; do
		pid2=$(fp_waiter "$RUN_PID" "job run $JOB after its reconnect" step_after_delete "cleanupctl:job:$JOB:run")
		[ "$pid2" != "$pid" ] && break
		((SECONDS - t0 < 60)) || fail "job run $JOB: no new backend at the failpoint after the reconnect"
		sleep 0.01
	done
	assert_eq "$(job_field "$JOB" step_no)" "$before" "step_no of job $JOB while the step lost with the backend runs again"
	fp_release
	wait_run
	assert_eq "$RUN_RC" 0 "exit of job run $JOB --reconnect 1"
	assert_eq "$(jq -r '.completed, .reconnects' "$RUN_OUT" | tr '\n' ' ')" "true 1 " \
		"completed and reconnects of job run $JOB --reconnect 1"
	fp_job_exact prune "$JOB" "$TARGET"
	log "cell step_after_delete x terminate x prune with --reconnect 1: job $JOB reconnected, ran step $((before + 1)) again, exact"
}
