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
# Data: (FP_LIB_SERVERS + FP_REMOVE_SERVERS) servers x 2 libraries x
# CRASH_FP_ITEMS (300) items, with dependents (seed 001): cleanup_lab.seed_demo's
# spread of CRASH_FP_DEPENDENTS (3) per item on average (every tenth item
# none, the others 0 to 6 retries and previews), per library 20 collections,
# a sync status and 15 history rows; and in every library, its first odd-id
# item (deleted by every kind of job) gets 300 retries more, so that every
# cell's target has an item whose claim stays in flight across steps. One
# job per server at a time (the engine's rule) and all cells of a kill held
# at once: prune and remove-library cells take the first library of servers
# 1 to FP_LIB_SERVERS (the second one stays, untouched), remove-server cells
# take the servers after them. The ground truth of the dependents is
# recorded row for row (crashtest.deps_before, libdeps_before,
# history_before).

FP_ITEMS=${CRASH_FP_ITEMS:-300}
FP_DEPENDENTS=${CRASH_FP_DEPENDENTS:-3}
FP_LIB_SERVERS=${FP_LIB_SERVERS:-10}
FP_REMOVE_SERVERS=${FP_REMOVE_SERVERS:-4}

# The test's own SQL helpers (schema crashtest).
read -r -d '' FP_SQL_HELPERS <<'EOF_SQL' || true
-- The dependents as they are now, in the shape of the ground truth.
CREATE VIEW crashtest.deps_now AS
    SELECT 'retry'::text AS kind, id, item_id FROM inventory.item_retries
    UNION ALL SELECT 'preview', id, item_id FROM inventory.identity_review_previews;
CREATE VIEW crashtest.libdeps_now AS
    SELECT 'collection'::text AS kind, id, library_id FROM inventory.library_collections
    UNION ALL SELECT 'sync', library_id, library_id FROM inventory.library_sync_status;
-- History rows of the ground truth that are not as they must be now: a row
-- of a deleted library (crashtest.gone_libs) detached with its name kept
-- (or the library's), the deletion failure status and message (an
-- existing error kept), its old status remembered; any other row
-- unchanged; the audit payload never touched; no row ever deleted (D6).
CREATE VIEW crashtest.history_wrong AS
    SELECT b.id, b.library_id FROM crashtest.history_before b
      LEFT JOIN inventory.classification_history h ON h.id = b.id
     WHERE h.id IS NULL OR h.payload IS DISTINCT FROM b.payload
        OR CASE WHEN b.library_id IN (SELECT id FROM crashtest.gone_libs)
                THEN h.library_id IS NOT NULL
                     OR h.library_name IS DISTINCT FROM coalesce(b.library_name, b.lib_name)
                     OR h.status <> 'failed' OR h.status_before_detach IS DISTINCT FROM b.status
                     OR h.error IS DISTINCT FROM coalesce(b.error, 'library deleted') OR h.detached_at IS NULL
                ELSE h.library_id IS DISTINCT FROM b.library_id OR h.library_name IS DISTINCT FROM b.library_name
                     OR h.status <> b.status OR h.error IS DISTINCT FROM b.error OR h.detached_at IS NOT NULL END;
-- Synchronous steps of job P_JOB (each its own transaction, committed
-- before the next) until the next step, as previewed, is P_UNTIL:
--   drain                     a drain step that visits candidates
--                             (after at least one step)
--   drain-claims              a drain-claims step after which claims are
--                             still in flight (after at least one step)
--   finalizing                any step once the job no longer drains
--   any other action          a step of that action (drain-library-
--                             dependents, delete-library, delete-server)
CREATE PROCEDURE crashtest.advance(p_job bigint, p_until text)
LANGUAGE plpgsql AS $$
DECLARE
    p  cleanup.job_steps;
    n  int := 0;
BEGIN
    LOOP
        IF p_until = 'finalizing' THEN
            EXIT WHEN (SELECT phase <> 'draining' FROM cleanup.jobs WHERE id = p_job);
        ELSE
            p := cleanup.job_step_preview(p_job);
            EXIT WHEN CASE p_until
                WHEN 'drain' THEN n > 0 AND p.action = 'drain' AND p.visited > 0
                WHEN 'drain-claims' THEN n > 0 AND p.action = 'drain-claims' AND p.claims_in_flight > 0
                ELSE p.action = p_until END;
        END IF;
        IF n >= 300 THEN
            RAISE EXCEPTION 'job % did not reach a % step within 300 steps', p_job, p_until;
        END IF;
        PERFORM cleanup.job_step(p_job, (SELECT step_no + 1 FROM cleanup.jobs WHERE id = p_job));
        COMMIT;
        n := n + 1;
    END LOOP;
END $$;
-- The SQLSTATE of P_SQL, run and always rolled back: 'accepted' when it
-- succeeded (a write the test expects refused).
CREATE FUNCTION crashtest.sqlstate_of(p_sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        EXECUTE p_sql;
        RAISE EXCEPTION 'accepted' USING ERRCODE = 'XX0OK';
    EXCEPTION WHEN OTHERS THEN
        RETURN CASE WHEN SQLSTATE = 'XX0OK' THEN 'accepted' ELSE SQLSTATE END;
    END;
END $$;
EOF_SQL

# matrix_data: seeds the data, records the ground truth (crashtest.before,
# crashtest.gone, crashtest.gone_libs and the dependents' *_before) and the
# free targets.
matrix_data() {
	local libs srvs
	q "SELECT cleanup_lab.seed_demo(:'s', 2, :'n', :'d')" -v s=$((FP_LIB_SERVERS + FP_REMOVE_SERVERS)) \
		-v n="$FP_ITEMS" -v d="$FP_DEPENDENTS" >/dev/null
	q "INSERT INTO inventory.item_retries (item_id, reason)
	   SELECT f.id, 'heavy ' || g
	     FROM (SELECT min(id) AS id FROM inventory.items WHERE id % 2 = 1 GROUP BY library_id) f,
	          generate_series(1, 300) g ORDER BY 1, 2" >/dev/null
	snapshot before
	q "CREATE TABLE crashtest.gone (id bigint PRIMARY KEY);
	   CREATE TABLE crashtest.gone_libs (id bigint PRIMARY KEY);
	   CREATE TABLE crashtest.history_before AS
	       SELECT h.id, h.library_id, h.library_name, h.status, h.error, h.payload, l.name AS lib_name
	         FROM inventory.classification_history h JOIN inventory.libraries l ON l.id = h.library_id;
	   $FP_SQL_HELPERS
	   CREATE TABLE crashtest.deps_before AS SELECT * FROM crashtest.deps_now;
	   CREATE TABLE crashtest.libdeps_before AS SELECT * FROM crashtest.libdeps_now;"
	libs=$(q "SELECT string_agg(min::text, ' ' ORDER BY min) FROM (
	            SELECT min(l.id) FROM inventory.libraries l
	             WHERE l.server_id IN (SELECT id FROM inventory.media_servers ORDER BY id LIMIT :'n')
	             GROUP BY l.server_id) f" -v n="$FP_LIB_SERVERS")
	srvs=$(q "SELECT string_agg(id::text, ' ' ORDER BY id) FROM (
	            SELECT id FROM inventory.media_servers ORDER BY id OFFSET :'n') s" -v n="$FP_LIB_SERVERS")
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
		q "INSERT INTO crashtest.gone SELECT id FROM crashtest.before WHERE library_id = :'t' AND id % 2 = 1;
		   SELECT external_id FROM crashtest.before WHERE library_id = :'t' AND id % 2 = 0
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
		q "INSERT INTO crashtest.gone SELECT id FROM crashtest.before WHERE library_id = :'t';
		   INSERT INTO crashtest.gone_libs VALUES (:'t')" -v t="$TARGET"
		;;
	remove-server)
		q "INSERT INTO crashtest.gone SELECT id FROM crashtest.before WHERE server_id = :'t';
		   INSERT INTO crashtest.gone_libs SELECT id FROM inventory.libraries WHERE server_id = :'t'" -v t="$TARGET"
		;;
	esac
}

# fp_job_exact KIND JOB TARGET [HELD WANT]: JOB completed with exactly the
# counters its ground truth gives, its step records add up to them, its
# parents went after their drain (and nothing else of the target's is
# left), the rows of its target and their dependents are the ground
# truth's, and replaying every committed step returns the record and
# changes nothing; with HELD and WANT, its step HELD was a WANT step. (The
# whole inventory: fp_inventory_exact, once every job has ended.) One
# query names every check that does not hold.
fp_job_exact() {
	local kind=$1 job=$2 t=$3 held=${4:-0} want=${5:-} scope=library_id checks bad
	case $kind in
	prune)
		checks="('counters: deleted = visited = unseen rows, kept = seen rows, examined = all rows',
		          j.deleted = g.gone AND j.visited = g.gone AND j.kept = g.stay AND j.examined = g.total
		          AND j.moved + j.absent + j.retained = 0 AND j.libraries_deleted = 0 AND j.servers_deleted = 0),
		        ('admission of the library open again',
		          (SELECT state = 'open' FROM cleanup.library_admission WHERE library_id = :'t')),
		        ('library_stats item count',
		          (SELECT sum(item_count) FROM cleanup.library_stats WHERE library_id = :'t') =
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
	# Dependents (seed 001), every kind: row for row against the ground
	# truth, the job's counters equal to it, claims all released.
	checks="$checks,
	        ('dependents of the target items: those of deleted items gone, those of kept items all there',
	          NOT EXISTS ((SELECT d.kind, d.id, d.item_id FROM crashtest.deps_now d JOIN b ON b.id = d.item_id)
	                      EXCEPT (SELECT d.kind, d.id, d.item_id FROM crashtest.deps_before d JOIN b ON b.id = d.item_id
	                               WHERE d.item_id NOT IN (SELECT id FROM crashtest.gone)))
	          AND NOT EXISTS ((SELECT d.kind, d.id, d.item_id FROM crashtest.deps_before d JOIN b ON b.id = d.item_id
	                            WHERE d.item_id NOT IN (SELECT id FROM crashtest.gone))
	                          EXCEPT (SELECT d.kind, d.id, d.item_id FROM crashtest.deps_now d JOIN b ON b.id = d.item_id))),
	        ('library dependents of the target: those of deleted libraries gone, the others all there',
	          NOT EXISTS ((SELECT d.kind, d.id FROM crashtest.libdeps_now d WHERE d.library_id IN (SELECT id FROM lb))
	                      EXCEPT (SELECT d.kind, d.id FROM crashtest.libdeps_before d WHERE d.library_id IN (SELECT id FROM lb)
	                                 AND d.library_id NOT IN (SELECT id FROM crashtest.gone_libs)))
	          AND NOT EXISTS ((SELECT d.kind, d.id FROM crashtest.libdeps_before d WHERE d.library_id IN (SELECT id FROM lb)
	                              AND d.library_id NOT IN (SELECT id FROM crashtest.gone_libs))
	                          EXCEPT (SELECT d.kind, d.id FROM crashtest.libdeps_now d WHERE d.library_id IN (SELECT id FROM lb)))),
	        ('history of the target libraries: detached with name, status and error kept for deleted libraries (D6), unchanged otherwise, never deleted',
	          NOT EXISTS (SELECT 1 FROM crashtest.history_wrong w WHERE w.library_id IN (SELECT id FROM lb))),
	        ('dependent counters = ground truth (retries and previews of deleted items; collections, sync status, history of deleted libraries)',
	          j.retries_deleted = (SELECT count(*) FROM crashtest.deps_before d JOIN b ON b.id = d.item_id
	                                WHERE d.kind = 'retry' AND d.item_id IN (SELECT id FROM crashtest.gone))
	          AND j.previews_deleted = (SELECT count(*) FROM crashtest.deps_before d JOIN b ON b.id = d.item_id
	                                     WHERE d.kind = 'preview' AND d.item_id IN (SELECT id FROM crashtest.gone))
	          AND j.collections_deleted = (SELECT count(*) FROM crashtest.libdeps_before d WHERE d.kind = 'collection'
	                                        AND d.library_id IN (SELECT id FROM lb)
	                                        AND d.library_id IN (SELECT id FROM crashtest.gone_libs))
	          AND j.sync_status_deleted = (SELECT count(*) FROM crashtest.libdeps_before d WHERE d.kind = 'sync'
	                                        AND d.library_id IN (SELECT id FROM lb)
	                                        AND d.library_id IN (SELECT id FROM crashtest.gone_libs))
	          AND j.history_detached = (SELECT count(*) FROM crashtest.history_before h
	                                     WHERE h.library_id IN (SELECT id FROM lb)
	                                       AND h.library_id IN (SELECT id FROM crashtest.gone_libs))),
	        ('claims: claimed = released > 0, none left, some in flight across steps (drain-claims)',
	          j.claimed = j.released AND j.claimed > 0
	          AND NOT EXISTS (SELECT 1 FROM inventory.items WHERE claimed_by = j.id)
	          AND EXISTS (SELECT 1 FROM cleanup.job_steps s WHERE s.job_id = j.id AND s.action = 'drain-claims'
	                         AND s.claims_in_flight > 0)),
	        ('every library delete after a drain of its own dependents (D5)',
	          NOT EXISTS (SELECT 1 FROM cleanup.job_steps p WHERE p.job_id = j.id AND p.action = 'delete-library'
	                         AND NOT EXISTS (SELECT 1 FROM cleanup.job_steps d
	                                          WHERE d.job_id = j.id AND d.action = 'drain-library-dependents'
	                                            AND d.library_id = p.library_id AND d.step_no < p.step_no)))"
	# Every kind: the steps add up (check_consistent), parents went after
	# their drain (parents_after_drain), and with HELD and WANT, step HELD
	# (the one a cell held) was a WANT step (a regular expression over its
	# action, plus ' in-flight' when claims were in flight after it).
	checks="$checks,
	        ('steps consistent: counters = sums of the step records, identities, budgets', $(consistent_sql)),
	        ('parents deleted after their drain, one per step, the server last', $(parents_sql) = '0 0'),
	        ('the held step (' || :'held' || ') was a ' || :'want' || ' step',
	          :'want' = '' OR (SELECT action || CASE WHEN claims_in_flight > 0 THEN ' in-flight' ELSE '' END
	                              FROM cleanup.job_steps WHERE job_id = j.id AND step_no = :'held') ~ :'want')"
	bad=$(q "WITH b AS (SELECT * FROM crashtest.before WHERE $scope = :'t'),
	              lb AS (SELECT DISTINCT library_id AS id FROM b),
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
	            WHERE j.id = :'job') v WHERE ok IS NOT TRUE" -v job="$job" -v t="$t" -v held="$held" -v want="$want")
	if [ -n "$bad" ]; then
		q "SELECT * FROM cleanup.jobs WHERE id = :'job'" -v job="$job" >&2
		fail "$kind job $job on $t differs from its ground truth: $bad"
	fi
	check_replay_engine "$job"
}

# fp_inventory_exact: the whole inventory is the ground truth: no row of a
# target that should stay went, no row outside the targets changed; and so
# are the dependents: those of deleted items and libraries gone, every
# other one there, the history of deleted libraries detached (D6), none
# deleted, and no claim left anywhere.
fp_inventory_exact() {
	local bad
	assert_inventory_is "id NOT IN (SELECT id FROM crashtest.gone)" "the inventory differs from the ground truth"
	bad=$(q "SELECT concat_ws('; ',
	           CASE WHEN EXISTS ((SELECT * FROM crashtest.deps_now
	                              EXCEPT SELECT * FROM crashtest.deps_before WHERE item_id NOT IN (SELECT id FROM crashtest.gone))
	                             UNION ALL
	                             (SELECT * FROM crashtest.deps_before WHERE item_id NOT IN (SELECT id FROM crashtest.gone)
	                              EXCEPT SELECT * FROM crashtest.deps_now))
	                THEN 'item dependents' END,
	           CASE WHEN EXISTS ((SELECT * FROM crashtest.libdeps_now
	                              EXCEPT SELECT * FROM crashtest.libdeps_before
	                                      WHERE library_id NOT IN (SELECT id FROM crashtest.gone_libs))
	                             UNION ALL
	                             (SELECT * FROM crashtest.libdeps_before
	                               WHERE library_id NOT IN (SELECT id FROM crashtest.gone_libs)
	                              EXCEPT SELECT * FROM crashtest.libdeps_now))
	                THEN 'library dependents' END,
	           CASE WHEN EXISTS (SELECT 1 FROM crashtest.history_wrong)
	                  OR (SELECT count(*) FROM inventory.classification_history)
	                     <> (SELECT count(*) FROM crashtest.history_before)
	                THEN 'classification history' END,
	           CASE WHEN EXISTS (SELECT 1 FROM inventory.items WHERE claimed_by IS NOT NULL) THEN 'claims left' END)")
	[ -z "$bad" ] || fail "the dependents differ from the ground truth: $bad"
	log "the whole inventory and its dependents equal the ground truth"
}

# fp_advance JOB N: N steps with synchronous commit (durable whatever
# crashes later), from a process of their own.
fp_advance() {
	local job=$1 n=$2
	((n > 0)) || return 0
	"$CLEANUPCTL" --db "$CONN" --quiet job run "$job" --max-steps "$n" --synchronous-commit on >/dev/null ||
		fail "advancing job $job by $n steps"
}

# fp_advance_to JOB UNTIL: synchronous steps of JOB, each committed before
# the next, until its next step is UNTIL (crashtest.advance: drain,
# drain-claims, finalizing, or an action such as delete-library); prints
# the job's step_no then.
fp_advance_to() {
	q "CALL crashtest.advance(:'j', :'u'); SELECT step_no FROM cleanup.jobs WHERE id = :'j'" -v j="$1" -v u="$2" ||
		fail "advancing job $1 to $2"
}

# target_hash KIND TARGET: the rows of TARGET's scope in the ground truth
# that are still there (with their claims), TARGET's parent rows, and the
# dependents of both (item dependents, collections and sync status, the
# history rows), as one value.
target_hash() { q "SELECT $(target_hash_sql "$1")" -v t="$2"; }

# target_hash_sql KIND: target_hash of target :'t' as one scalar subquery.
target_hash_sql() {
	local col=library_id parents="SELECT count(*) FROM inventory.libraries WHERE id = :'t'"
	if [ "$1" = remove-server ]; then
		col=server_id
		parents="SELECT count(*) FROM inventory.libraries WHERE server_id = :'t'"
	fi
	echo "(WITH b AS (SELECT id, library_id FROM crashtest.before WHERE $col = :'t'),
	        lb AS (SELECT DISTINCT library_id AS id FROM b)
	   SELECT (SELECT count(*) || ':' || md5(coalesce(string_agg(i.id || '/' || i.library_id || '/'
	                                                              || coalesce(i.claimed_by, 0), ',' ORDER BY i.id), ''))
	             FROM inventory.items i JOIN b USING (id))
	          || ':' || ($parents)
	          || ':' || (SELECT count(*) || '/' || md5(coalesce(string_agg(d.kind || d.id, ',' ORDER BY d.kind, d.id), ''))
	                       FROM crashtest.deps_now d JOIN b ON b.id = d.item_id)
	          || ':' || (SELECT count(*) || '/' || md5(coalesce(string_agg(d.kind || d.id, ',' ORDER BY d.kind, d.id), ''))
	                       FROM crashtest.libdeps_now d WHERE d.library_id IN (SELECT id FROM lb))
	          || ':' || (SELECT md5(coalesce(string_agg(h::text, ',' ORDER BY h.id), ''))
	                       FROM inventory.classification_history h
	                      WHERE h.id IN (SELECT id FROM crashtest.history_before WHERE library_id IN (SELECT id FROM lb))))"
}

# held_state KIND JOB TARGET: "step_no|job_hash|target_hash" of JOB, in one
# query.
held_state() {
	q "SELECT step_no, $(job_hash_sql), $(target_hash_sql "$1") FROM cleanup.jobs WHERE id = :'job'" \
		-v job="$2" -v t="$3"
}

# fp_step_matrix KILL [claims]: the cells of the step matrix for KILL,
# held at once and killed together (one server crash for all of them):
#   step_after_discovery, step_after_delete, step_before_commit
#       x prune, remove-library, remove-server: a drain step (one that
#       discovers candidates), the run's first, after at least one
#       synchronous step (crashtest.advance: until the next step is one);
#   final_check x prune: after the run's own drain steps;
#   step_before_parent_delete x remove-library: the library delete, after
#       the run's own drain steps (and library dependent drains); x
#       remove-server: the server delete (its libraries deleted by
#       synchronous steps before).
# With "claims" (seed 001), seven cells more:
#   step_after_delete, step_before_commit x prune, remove-library,
#       remove-server: a drain-claims step, the run's first, after
#       synchronous steps claimed items (the heavy one with 300 dependents
#       among them): claims in flight, dependents being deleted, the items
#       not yet; the claims are still in flight after the held step;
#   step_before_commit x remove-library: a drain-library-dependents step
#       (collections and sync status deleted, history detached, the parent
#       not yet deleted).
# Each cell's job runs with its point switched on (cleanup.failpoints) and
# is observed waiting on the point's lock; then, per KILL:
#   kill9      each runner dies (exit 137); its backend does not notice while
#              it waits (client_connection_check_interval = 0): a second
#              runner is busy, never a second execution; released, the
#              orphan commits the held step once and then, its reply
#              undeliverable, runs nothing more.
#   terminate  each backend is terminated: the runner exits 1 (connection
#              lost) and the held step left no trace (job row, step records,
#              manifest, the target's rows, claims, dependents and parents as
#              before it).
#   immediate  the server crashes (pg_ctl stop -m immediate) and restarts;
#              each runner exits 1; the held step left no trace, and steps
#              the run committed asynchronously before it may be lost, whole,
#              never one before the last synchronous step.
# Claims survive the kill (D4): a claims cell's job still has claimed items,
# and a writer's new dependent for one is refused (CUA10). Then each job is
# resumed by a new process and must end exact (fp_job_exact); the step held
# in an advanced cell, committed by the orphan or run again by the resume,
# is the kind of step the cell is about.
fp_step_matrix() {
	local kill=$1 claims=${2:-} n i kind point pid rc got got2
	local -a kinds=() points=() preps=() jobs=() targets=() base=() before=() jh=() th=() runs=() errs=() pids=()
	for kind in prune remove-library remove-server; do
		for point in step_after_discovery step_after_delete step_before_commit; do
			kinds+=("$kind") points+=("$point") preps+=(drain)
		done
	done
	kinds+=(prune remove-library remove-server)
	points+=(final_check step_before_parent_delete step_before_parent_delete)
	preps+=(- - delete-server)
	if [ "$claims" = claims ]; then
		for kind in prune remove-library remove-server; do
			for point in step_after_delete step_before_commit; do
				kinds+=("$kind") points+=("$point") preps+=(drain-claims)
			done
		done
		kinds+=(remove-library) points+=(step_before_commit) preps+=(drain-library-dependents)
	fi
	n=${#kinds[@]}
	for ((i = 0; i < n; i++)); do
		fp_job "${kinds[i]}"
		jobs[i]=$JOB targets[i]=$TARGET base[i]=0
		[ "${preps[i]}" = - ] || base[i]=$(fp_advance_to "$JOB" "${preps[i]}")
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
		IFS='|' read -r "before[i]" "jh[i]" "th[i]" <<<"$(held_state "${kinds[i]}" "${jobs[i]}" "${targets[i]}")"
	done
	log "$n jobs held at their failpoints; now: $kill"
	case $kill in
	kill9)
		for ((i = 0; i < n; i++)); do
			RUN_PID=${runs[i]} RUN_ERR=${errs[i]}
			kill -9 "$RUN_PID"
			wait_run
			assert_eq "$RUN_RC" 137 "exit status of job run ${jobs[i]} killed at ${points[i]}"
			rc=0
			"$CLEANUPCTL" --db "$CONN" --quiet job step "${jobs[i]}" >/dev/null 2>"$CRASH_TMP/second.err" || rc=$?
			assert_eq "$rc" 3 "exit of a second runner of job ${jobs[i]} while its orphaned step is in flight (busy)"
			assert_eq "$(q "SELECT (SELECT count(*) FROM pg_locks l WHERE l.pid = :'pid' AND $(fp_lock_sql false)),
			                       $(job_hash_sql)" -v pid="${pids[i]}" -v key="${FP_KEYS[${points[i]}]}" \
				-v db="$FP_DB" -v job="${jobs[i]}")" "1|${jh[i]}" \
				"the orphaned backend ${pids[i]} of job ${jobs[i]} still waiting at ${points[i]}, and the job unchanged, after a busy second runner"
		done
		fp_release
		for ((i = 0; i < n; i++)); do
			# Gone, having committed the held step once and nothing more
			# (a wrong step_no shows as this wait's timeout).
			wait_for "SELECT (SELECT count(*) FROM pg_stat_activity WHERE pid = :'pid') || ' '
			                 || (SELECT step_no FROM cleanup.jobs WHERE id = :'job')" "0 $((before[i] + 1))" \
				"the orphaned backend ${pids[i]} of job ${jobs[i]} to end after committing the step held at ${points[i]} (step_no $((before[i] + 1)))" \
				-v pid="${pids[i]}" -v job="${jobs[i]}"
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
			IFS='|' read -r rc got got2 <<<"$(held_state "${kinds[i]}" "${jobs[i]}" "${targets[i]}")"
			if [ "$rc" = "${before[i]}" ]; then
				assert_eq "$got" "${jh[i]}" \
					"job ${jobs[i]}, its steps and manifest after $kill at ${points[i]} of step $((rc + 1))"
				assert_eq "$got2" "${th[i]}" \
					"rows, claims, dependents and parents of ${kinds[i]} target ${targets[i]} after $kill at ${points[i]} of step $((rc + 1))"
			elif [ "$kill" = immediate ] && ((rc >= base[i] && rc < before[i])); then
				log "job ${jobs[i]}: the crash took $((before[i] - rc)) asynchronously committed steps with it"
			else
				fail "job ${jobs[i]} at step $rc after $kill at ${points[i]} of step $((before[i] + 1)) (synchronous up to ${base[i]})"
			fi
		fi
		check_consistent "${jobs[i]}" "${kinds[i]} job ${jobs[i]} right after $kill at ${points[i]}"
		if [ "${preps[i]}" = drain-claims ]; then
			assert_eq "$(q "SELECT (SELECT count(*) FROM inventory.items WHERE claimed_by = :'j') > 0,
			                       crashtest.sqlstate_of(format(
			                           'INSERT INTO inventory.item_retries (item_id, reason) VALUES (%s, %L)',
			                           (SELECT min(id) FROM inventory.items WHERE claimed_by = :'j'), 'late'))" \
				-v j="${jobs[i]}")" "t|CUA10" \
				"claims of job ${jobs[i]} after $kill at ${points[i]} of a drain-claims step (in flight; a new dependent refused)"
		fi
		resume "${jobs[i]}"
		case ${preps[i]} in
		-) got= ;;
		drain) got='^drain( in-flight)?$' ;;
		drain-claims) got='^drain-claims in-flight$' ;;
		*) got="^${preps[i]}\$" ;;
		esac
		fp_job_exact "${kinds[i]}" "${jobs[i]}" "${targets[i]}" $((base[i] + 1)) "$got"
		log "cell ${points[i]} x $kill x ${kinds[i]}$([ "${preps[i]}" = - ] || echo " (${preps[i]})"): job ${jobs[i]} held at step $((before[i] + 1)) (${base[i]} synchronous before), exact after resume"
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
	# Past the items' drain and the first library's dependent drain: the
	# next step deletes the library.
	at=$(($(fp_advance_to "$JOB" delete-library) + 1))
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
