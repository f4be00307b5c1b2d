#!/bin/bash
# C9, A3, A6, S6, S10, T1-T8 (the ledger test, with hostile
# writers): two sync writers insert, update and move their items across
# four libraries of two servers, from before a prune of library A is
# created until after it completed, and through a remove-library of
# library C on the other server; a third writer misbehaves on purpose all
# along: it forges claims (naming the running jobs) on items of every
# library, holds rows of A FOR UPDATE and the items table in SHARE mode
# for a while, declares count-cache locks and idles in its transaction,
# and writes dependents of items. Every writer is a real login of
# cleanup_writer, not a superuser; the jobs run as a login of
# cleanup_runner. Each write and its ledger row commit in one statement,
# so the ledger holds exactly the writes the database accepted. At the end
# every accepted write is still there, in the library of its last accepted
# write, unless that library was C, whose removal deleted it; not one write
# accepted while the prune collected was deleted (a dependent written then
# included: C9); the jobs deleted exactly the seeded rows they had to and
# nothing outside their scope (no forged claim ever bit: T1); both jobs
# completed; every busy answer they recorded named its holder (T3); every
# row in each job's scope is in exactly one counter (T7).
. "$(dirname "$0")/lib_foundation.sh"
die() {
	fail "$@"
	finish
}

db_fresh cleanup_lab_t_ledger
sql "SELECT cleanup_lab.seed_demo(2, 2, 2000)" >/dev/null
read -r A B C D < <(sql "SELECT string_agg(id::text, ' ' ORDER BY id) FROM inventory.libraries")
sql "CREATE SCHEMA ledger;
     CREATE TABLE ledger.writes (seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, item_id bigint NOT NULL,
                                 library_id bigint NOT NULL, op text NOT NULL, at timestamptz DEFAULT clock_timestamp());
     CREATE TABLE ledger.seed AS SELECT id, library_id, external_id FROM inventory.items;
     CREATE TABLE ledger.marks (what text PRIMARY KEY, seq bigint NOT NULL)" >/dev/null
# The writers and the runner: logins of the installer's roles, nothing more
# (the writers may also write their own ledger).
login_role t_ledger_writer cleanup_writer
login_role t_ledger_runner cleanup_runner
sql "GRANT USAGE ON SCHEMA ledger TO t_ledger_writer; GRANT SELECT, INSERT ON ledger.writes TO t_ledger_writer" >/dev/null
# Bounded like a writer login the installer has seen (docs/roles.md): no
# writer statement of the test waits without end.
WDB="$DB user=t_ledger_writer options='-c lock_timeout=10s -c idle_in_transaction_session_timeout=60s'"
RDB="$DB user=t_ledger_runner"

# A write and its ledger row, one statement: both commit or neither.
ins() { echo "WITH w AS (INSERT INTO inventory.items (library_id, external_id) VALUES ($1, '$2') RETURNING id, library_id)
INSERT INTO ledger.writes (item_id, library_id, op) SELECT id, library_id, 'insert' FROM w;"; }
# mv SRC DST PATTERN: moves a random item of SRC whose external ID is LIKE PATTERN to DST.
mv_item() { echo "WITH w AS (UPDATE inventory.items SET library_id = $2 WHERE id = (SELECT id FROM inventory.items
  WHERE library_id = $1 AND external_id LIKE '$3' ORDER BY random() LIMIT 1) RETURNING id, library_id)
INSERT INTO ledger.writes (item_id, library_id, op) SELECT id, library_id, 'move' FROM w;"; }
upd() { echo "WITH w AS (UPDATE inventory.items SET title = 'updated ' || clock_timestamp() WHERE id = (SELECT id
  FROM inventory.items WHERE library_id = $1 AND external_id LIKE '$2' ORDER BY random() LIMIT 1) RETURNING id, library_id)
INSERT INTO ledger.writes (item_id, library_id, op) SELECT id, library_id, 'update' FROM w;"; }

# writer N: statements until $TMPD/stop exists (at most 20,000). Refused
# writes (fenced: CUA01, busy: 55P03) fail alone and leave no ledger row.
writer() {
	local n=$1 k=0 libs=("$A" "$B" "$C" "$D") l
	while [ ! -e "$TMPD/stop" ] && [ $k -lt 20000 ]; do
		k=$((k + 1))
		l=${libs[$((RANDOM % 4))]}
		case $((RANDOM % 6)) in
		0 | 1) ins "$l" "w$n-$k" ;;
		2) mv_item "$A" "$B" "w$n-%" ;;
		3) mv_item "$B" "$A" "w$n-%" ;;
		4) if [ $((RANDOM % 2)) = 0 ]; then mv_item "$C" "$D" "w$n-%"; else mv_item "$D" "$C" "w$n-%"; fi ;;
		5) upd "$l" "w$n-%" ;;
		esac
	done | psql -X -q "$WDB" -v ON_ERROR_STOP=0 >/dev/null 2>"$TMPD/writer$n.err"
}

# The hostile writer: until $TMPD/stop exists, one misbehaviour after
# another (its refused statements fail alone; the sleeps are its own
# misbehaviour, not the test's synchronisation).
hostile() {
	local k=0 l libs=("$A" "$B" "$C" "$D")
	while [ ! -e "$TMPD/stop" ] && [ $k -lt 5000 ]; do
		k=$((k + 1))
		l=${libs[$((RANDOM % 4))]}
		case $((RANDOM % 6)) in
		0) # T1: forge a claim naming a running job (or one that never was).
			echo "UPDATE inventory.items SET claimed_by = coalesce((SELECT max(id) FROM cleanup.jobs), 999999)
			       WHERE id = (SELECT id FROM inventory.items WHERE library_id = $l ORDER BY random() LIMIT 1);"
			echo "UPDATE inventory.items SET claimed_by = 999999 WHERE id = (SELECT min(id) FROM inventory.items WHERE library_id = $l);" ;;
		1) # T4: hold a row of the pruned library.
			echo "BEGIN; SELECT 1 FROM inventory.items WHERE library_id = $A ORDER BY random() LIMIT 1 FOR UPDATE;
			      SELECT pg_sleep(0.3); COMMIT;" ;;
		2) # T3: hold the items table (its UPDATE grant allows it).
			echo "BEGIN; LOCK TABLE inventory.items IN SHARE MODE; SELECT pg_sleep(0.1); COMMIT;" ;;
		3) # T3: declare count-cache locks, then idle in the transaction.
			echo "BEGIN; SELECT inventory.count_declare(ARRAY[$l]::bigint[]); SELECT pg_sleep(0.3); COMMIT;" ;;
		4) # Dependents of the other writers' items anywhere (refused in a
			# draining library, CUA11; protecting their item while A collects).
			echo "INSERT INTO inventory.item_retries (item_id, reason)
			      SELECT id, 'hostile' FROM inventory.items WHERE library_id = $l AND external_id LIKE 'w%'
			       ORDER BY random() LIMIT 1;" ;;
		5) # A claim mark on insert.
			echo "INSERT INTO inventory.items (library_id, external_id, claimed_by) VALUES ($l, 'h-$k', 1);" ;;
		esac
	done | psql -X -q "$WDB" -v ON_ERROR_STOP=0 >/dev/null 2>"$TMPD/hostile.err"
}

writes() { sql "SELECT count(*) FROM ledger.writes"; }
# wait_writes N: until the ledger holds N more writes than now (bounded).
wait_writes() {
	local want=$(($(writes) + $1)) i=0
	while [ "$(writes)" -lt "$want" ]; do
		i=$((i + 1))
		[ $i -lt 600 ] || { echo "FAIL: writers stalled at $(writes) writes"; exit 1; }
		sleep 0.1
	done
}
# retry_busy ARGS...: `run ARGS` again while it answers busy (exit 3).
retry_busy() {
	local i
	for i in $(seq 1 300); do
		run "$@"
		[ "$RC" != 3 ] && return 0
		sleep 0.02
	done
	die "still busy after 300 tries: $*"
}

writer 1 &
W1=$!
writer 2 &
W2=$!
hostile &
W3=$!
trap 'touch "$TMPD/stop"; kill $W1 $W2 $W3 2>/dev/null; wait; rm -rf "$TMPD"' EXIT
wait_writes 50

retry_busy --json job create prune --library "$A"
[ "$RC" = 0 ] || die "job create prune: exit $RC: $ERR"
PJ=$(jq -r .id <<<"$OUT")
sql "INSERT INTO ledger.marks VALUES ('prune created', (SELECT coalesce(max(seq), 0) FROM ledger.writes))" >/dev/null
retry_busy --json job create remove-library --library "$C"
[ "$RC" = 0 ] || die "job create remove-library: exit $RC: $ERR"
RJ=$(jq -r .id <<<"$OUT")
wait_writes 50

# Writes of this test inside the collecting window, so the window is never
# empty: an insert, an update of a seeded row the traversal will not see,
# and a move of a seeded row in from library B.
X=$(sql "SELECT min(id) FROM ledger.seed WHERE library_id = $A AND id % 3 = 0")
Y=$(sql "SELECT min(id) FROM ledger.seed WHERE library_id = $B")
Z=$(sql "SELECT max(id) FROM ledger.seed WHERE library_id = $A AND id % 3 = 0")
for s in "$(ins "$A" t-collecting)" \
	"WITH w AS (UPDATE inventory.items SET title = 'written while collecting' WHERE id = $X RETURNING id, library_id)
	 INSERT INTO ledger.writes (item_id, library_id, op) SELECT id, library_id, 'update' FROM w;" \
	"WITH w AS (UPDATE inventory.items SET library_id = $A WHERE id = $Y RETURNING id, library_id)
	 INSERT INTO ledger.writes (item_id, library_id, op) SELECT id, library_id, 'move' FROM w;" \
	"WITH w AS (INSERT INTO inventory.item_retries (item_id, reason) VALUES ($Z, 'written while collecting')
	            RETURNING item_id)
	 INSERT INTO ledger.writes (item_id, library_id, op) SELECT item_id, $A, 'dependent' FROM w;"; do
	for i in $(seq 1 300); do
		psql -X -q "$WDB" -c "$s" >/dev/null 2>&1 && break
		sleep 0.02
	done
	[ "$i" -lt 300 ] || die "a write of the collecting window stayed refused: $s"
done
[ "$(sql "SELECT count(*) FROM ledger.writes WHERE item_id IN ($X, $Y, $Z)")" = 3 ] || die "test writes missing"

# The traversal: what library A holds now, less the seeded rows with ids
# divisible by 3 (gone from the media server).
sql "SELECT external_id FROM inventory.items i WHERE library_id = $A
      AND NOT EXISTS (SELECT 1 FROM ledger.seed s WHERE s.id = i.id AND s.library_id = $A AND s.id % 3 = 0)" \
	>"$TMPD/seen"
N=$(wc -l <"$TMPD/seen")
run_in "$TMPD/seen" --quiet job append "$PJ"
[ "$RC" = 0 ] || die "job append: exit $RC: $ERR"
wait_writes 30
retry_busy job seal "$PJ" --expected "$N"
[ "$RC" = 0 ] || die "job seal: exit $RC: $ERR"
sql "INSERT INTO ledger.marks VALUES ('prune sealed', (SELECT max(seq) FROM ledger.writes))" >/dev/null

"$CLEANUPCTL" --db "$RDB" --quiet job run "$PJ" --max-busy 100000 >"$TMPD/prun.out" 2>"$TMPD/prun.err" &
P1=$!
"$CLEANUPCTL" --db "$RDB" --quiet job run "$RJ" --max-busy 100000 >"$TMPD/rrun.out" 2>"$TMPD/rrun.err" &
P2=$!
wait $P1 || die "job run $PJ: exit $?: $(cat "$TMPD/prun.err")"
wait $P2 || die "job run $RJ: exit $?: $(cat "$TMPD/rrun.err")"
wait_writes 50
touch "$TMPD/stop"
wait $W1 $W2 $W3

[ "$(sql "SELECT string_agg(phase, ' ' ORDER BY id) FROM cleanup.jobs WHERE id IN ($PJ, $RJ)")" = "completed completed" ] ||
	die "jobs did not complete"
TOTAL=$(writes)
COLLECTING=$(sql "SELECT count(*) FROM ledger.writes WHERE library_id = $A
                   AND seq > (SELECT seq FROM ledger.marks WHERE what = 'prune created')
                   AND seq <= (SELECT seq FROM ledger.marks WHERE what = 'prune sealed')")
echo "ledger: $TOTAL accepted writes, $COLLECTING into library $A while its prune collected"
[ "$COLLECTING" -ge 3 ] || die "the collecting window holds $COLLECTING writes into library $A"

# Every accepted write: there, in the library of its last write, unless
# that library was C (removed); never anything else.
LOST=$(sql "WITH last AS (SELECT DISTINCT ON (item_id) item_id, library_id, seq FROM ledger.writes
                          ORDER BY item_id, seq DESC)
            SELECT count(*) FROM last l LEFT JOIN inventory.items i ON i.id = l.item_id
             WHERE CASE WHEN l.library_id = $C THEN i.id IS NOT NULL
                        ELSE i.id IS NULL OR i.library_id <> l.library_id END")
[ "$LOST" = 0 ] || {
	sql "WITH last AS (SELECT DISTINCT ON (item_id) item_id, library_id, seq, op FROM ledger.writes ORDER BY item_id, seq DESC)
	     SELECT l.*, i.library_id AS now_in FROM last l LEFT JOIN inventory.items i ON i.id = l.item_id
	      WHERE CASE WHEN l.library_id = $C THEN i.id IS NOT NULL ELSE i.id IS NULL OR i.library_id <> l.library_id END LIMIT 10"
	die "$LOST accepted writes lost or misplaced"
}
# Not one write of the collecting window deleted (a stricter reading of the
# above: whatever library it went to later).
[ "$(sql "SELECT count(*) FROM ledger.writes w WHERE w.library_id = $A
           AND w.seq > (SELECT seq FROM ledger.marks WHERE what = 'prune created')
           AND w.seq <= (SELECT seq FROM ledger.marks WHERE what = 'prune sealed')
           AND NOT EXISTS (SELECT 1 FROM inventory.items i WHERE i.id = w.item_id)
           AND NOT EXISTS (SELECT 1 FROM ledger.writes v WHERE v.item_id = w.item_id AND v.seq > w.seq
                                                         AND v.library_id = $C)")" = 0 ] ||
	die "a write accepted while the prune collected was deleted"

# Seeded rows nobody wrote: pruned exactly (A, ids divisible by 3), removed
# with C, untouched elsewhere.
[ "$(sql "SELECT count(*) FROM ledger.seed s LEFT JOIN inventory.items i ON i.id = s.id
           WHERE s.id NOT IN (SELECT item_id FROM ledger.writes)
             AND CASE WHEN s.library_id = $C OR (s.library_id = $A AND s.id % 3 = 0) THEN i.id IS NOT NULL
                      ELSE i.id IS NULL OR i.library_id <> s.library_id OR i.external_id <> s.external_id END")" = 0 ] ||
	die "seeded rows pruned or removed wrongly"
WANT=$(sql "SELECT count(*) FROM ledger.seed WHERE library_id = $A AND id % 3 = 0 AND id NOT IN ($X, $Z)")
[ "$(sql "SELECT deleted FROM cleanup.jobs WHERE id = $PJ")" = "$WANT" ] || die "prune deleted $(sql "SELECT deleted FROM cleanup.jobs WHERE id = $PJ"), expected $WANT"
[ "$(sql "SELECT protected >= 4 FROM cleanup.jobs WHERE id = $PJ")" = t ] || die "prune protected fewer than the test's 4 writes"
# C9 for dependents: the item whose retry row was written while collecting.
[ "$(sql "SELECT count(*) FROM inventory.items WHERE id = $Z")" = 1 ] || die "item $Z, given a dependent while collecting, was pruned"
# T1: the hostile writer tried, and no claim mark but a step's exists.
grep -q "CUA12\|claimed_by is set only by a cleanup step" "$TMPD/hostile.err" || die "the hostile writer never tried to forge a claim"
[ "$(sql "SELECT count(*) FROM inventory.items i WHERE i.claimed_by IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM cleanup.job_claims c WHERE c.item_id = i.id AND c.job_id = i.claimed_by)")" = 0 ] ||
	die "an item carries a claim mark no step made"
# T7: every row in each job's scope is in exactly one counter; the steps
# add up, rows that left before a step reached them included.
for j in $PJ $RJ; do
	[ "$(sql "SELECT scope_count = deleted + kept + moved + absent FROM cleanup.jobs WHERE id = $j")" = t ] ||
		die "job $j: $(sql "SELECT format('scope %s <> deleted %s + kept %s + moved %s (%s early) + absent %s', scope_count, deleted, kept, moved, moved_early, absent) FROM cleanup.jobs WHERE id = $j")"
	[ "$(sql "SELECT count(*) FROM cleanup.job_steps WHERE job_id = $j AND visited + released + moved_early + absent_early
	           <> deleted + moved + absent + retained + claimed")" = 0 ] || die "job $j: a step's counts do not add up"
done
# T3: every busy answer the runs recorded names its holder.
BUSY=$(sql "SELECT count(*) FROM cleanup.events WHERE kind = 'busy' AND job_id IN ($PJ, $RJ)")
UNNAMED=$(sql "SELECT count(*) FROM cleanup.events WHERE kind = 'busy' AND job_id IN ($PJ, $RJ) AND message NOT LIKE '%held by%'")
[ "$UNNAMED" = 0 ] || {
	sql "SELECT message FROM cleanup.events WHERE kind = 'busy' AND job_id IN ($PJ, $RJ) AND message NOT LIKE '%held by%' LIMIT 5"
	die "$UNNAMED of $BUSY busy answers name no holder"
}
echo "hostile writer: $(grep -c "claimed_by is set only" "$TMPD/hostile.err") forged claims refused; $BUSY busy answers, each naming its holder"
[ "$(sql "SELECT count(*) FROM inventory.libraries WHERE id = $C")" = 0 ] || die "library C still there"
[ "$(sql "SELECT j.deleted = coalesce(sum(s.deleted), 0) AND j.step_no = count(s.*)
          FROM cleanup.jobs j LEFT JOIN cleanup.job_steps s ON s.job_id = j.id WHERE j.id = $RJ GROUP BY j.id")" = t ] ||
	die "remove-library counters differ from its steps"
echo "prune job $PJ: $(sql "SELECT format('deleted %s, kept %s, protected %s, moved %s', deleted, kept, protected, moved) FROM cleanup.jobs WHERE id = $PJ")"
echo "remove-library job $RJ: $(sql "SELECT format('deleted %s, moved %s', deleted, moved) FROM cleanup.jobs WHERE id = $RJ")"
finish
