#!/bin/sh
# The floors of a bounded prune and a bounded remove-library, measured
# (docs/benchmarks.md, "The floors, measured"): a prototype holding only
# what the seeds' rules ask of every step (bench/sql/floor_step.sql: one
# flat PL/pgSQL function a step) against the one statement the job
# replaces and against the engine, on copies of one database, in turning
# order each round.
#
# The prune (every second item seen):
#   delete   the one DELETE ... WHERE NOT EXISTS (manifest) of the unseen
#            rows, the library open (bench/sql/anchor_open.sql);
#   floor    the prototype, one round trip a step (psql), steps committed
#            asynchronously;
#   server   the prototype driven from inside the server (a DO loop that
#            commits after each step): no round trip at all;
#   engine   `cleanupctl job run`, steps committed asynchronously.
# The remove-library of the same library:
#   single   the engine's single-transaction removal (the old cascade);
#   floor    the prototype's removal drain, one round trip a step;
#   server   the same from inside the server;
#   engine   `cleanupctl job run` of a bounded removal.
# With SYNC=1 the floor and the engine also run with every step committed
# synchronously (floor-sync, engine-sync).
#
# ITEMS items in one library of one server; vacuumed, frozen and analyzed;
# every run checked exact. Prints each run's wall time and server CPU
# (the sandbox's processes, from /proc: steadier than wall time on a
# shared machine), the step p50 inside the server, and the medians' ratios.
#
#   sh bench/prune_floor.sh [BUILD] [ITEMS (100000)] [ROUNDS (3)]
#
# With ABLATE=1, the server-driven prune prototype runs again without each
# of the parts its setting floor.skip can leave out (locks, contract,
# verdict, record), once each a round: what each rule costs, counted.
#
# With COUNT=1, nothing is timed: the instructions are counted instead
# (callgrind, load-independent), each run a single-user backend of its own
# copy of the database: the one DELETE, the prototype's steps from a DO
# loop, the engine's steps (cleanup.job_step) from the same loop, the
# removal's single transaction, floor and engine steps alike. Only what
# the backend executes inside its one DO statement is counted (the one
# DELETE is sent in a DO too), not its start, nor the DO's own last
# commit; a runner's round trips are not counted either. Prints
# each run's instructions, their ratios, and for the floor and the engine
# the instructions inside the functions where a step's time goes
# (callgrind_annotate --inclusive; the whole files stay in
# BUILD/bench-floor-sandbox/count-*.txt, callgrind's own files count-*.cg).
#
# Uses a sandbox of its own in BUILD/bench-floor-sandbox and databases
# cleanup_lab_floor*.
set -eu
BUILD=${1:-build}
ITEMS=${2:-100000}
ROUNDS=${3:-3}
BIN=$BUILD/tui/cleanupctl
DIR=$(cd "$BUILD" && pwd)/bench-floor-sandbox
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib_sandbox.sh"
TMP=$(mktemp -d)
trap '"$BIN" --quiet sandbox stop --dir "$DIR" >/dev/null 2>&1 || true; rm -rf "$TMP"' EXIT
RUN=cleanup_lab_floor_run

now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc; }
ratio() { echo "scale=2; $1 / $2" | bc; }
# The server's CPU seconds so far: the postmaster's own and its reaped
# children's, and its live children's (/proc, clock ticks).
PM=$(head -n 1 "$DIR/data/postmaster.pid")
TCK=$(getconf CLK_TCK)
BASE=$(pgrep -P "$PM" | wc -l)
cpu() {
	# Until the backends of the run just ended are reaped (their time is
	# then the postmaster's cutime): at most a second.
	n=0
	while [ "$(pgrep -P "$PM" | wc -l)" -gt "$BASE" ] && [ $n -lt 100 ]; do
		sleep 0.01
		n=$((n + 1))
	done
	{
		awk '{ print $14 + $15 + $16 + $17 }' "/proc/$PM/stat"
		for c in $(pgrep -P "$PM"); do awk '{ print $14 + $15 }' "/proc/$c/stat" 2>/dev/null || true; done
	} | awk -v t="$TCK" '{ s += $1 } END { printf "%.2f", s / t }'
}
sqlr() { $PSQL -d $RUN -Atc "$1"; }

echo "== data: 1 server, 1 library of $ITEMS items, every second seen; vacuumed, frozen, analyzed"
new_db cleanup_lab_floor
"$BIN" --quiet --db "$(conninfo cleanup_lab_floor)" seed --servers 1 --libraries 1 --items "$ITEMS" >/dev/null
L=$($PSQL -d cleanup_lab_floor -Atc "SELECT max(id) FROM inventory.libraries")
J=$("$BIN" --json --db "$(conninfo cleanup_lab_floor)" job create prune --library "$L" | jq .id)
$PSQL -d cleanup_lab_floor -Atc "SELECT external_id FROM inventory.items WHERE library_id = $L AND id % 2 = 0" \
	>"$TMP/seen"
SEEN=$(wc -l <"$TMP/seen")
"$BIN" --quiet --db "$(conninfo cleanup_lab_floor)" job append "$J" <"$TMP/seen" >/dev/null
"$BIN" --quiet --db "$(conninfo cleanup_lab_floor)" job seal "$J" --expected "$SEEN" >/dev/null
$PSQL -d cleanup_lab_floor -c "VACUUM (FREEZE, ANALYZE)" -c "CHECKPOINT"

# The prototype's driver for function $1 of job $2, commits $3 (on|off):
# one step a round trip until a step says the job is done (at most
# ITEMS / 32 + 100 steps: far more than it takes).
drive() {
	echo "SET synchronous_commit = $3;"
	i=0
	while [ $i -lt $((ITEMS / 32 + 100)) ]; do
		printf 'SELECT floor.%s(%s) AS more \\gset\n' "$1" "$2"
		printf '%s\n' '\if :more \else \q \endif'
		i=$((i + 1))
	done
}

# A fresh copy of the database, checkpointed.
copy() {
	$PSQL -d postgres -c "DROP DATABASE IF EXISTS $RUN WITH (FORCE)" \
		-c "CREATE DATABASE $RUN TEMPLATE cleanup_lab_floor"
	$PSQL -d $RUN -c "CHECKPOINT"
}
# The prototype in the copy, for job $1 (cancelled first: its library is
# open, as for the one DELETE). Its tables are DDL, which marks the
# schema contract dirty: recorded again after them, as the installer
# would, so that its steps compare it as the engine's do, not in full.
floor_setup() {
	sqlr "SELECT (cleanup.job_transition($1, 'cancel')).phase" >/dev/null
	$PSQL -d $RUN -f "$HERE/sql/floor_step.sql" -c "SELECT floor.start($1)" \
		-c "SELECT cleanup.contract_record()" >/dev/null
}
# A removal job of the library in the copy (the prune cancelled first),
# mode $1; prints its id.
removal_job() {
	sqlr "SELECT (cleanup.job_transition($J, 'cancel')).phase" >/dev/null
	"$BIN" --json --db "$(conninfo $RUN)" job create remove-library --library "$L" --mode "$1" | jq .id
}
p50() { sqlr "SELECT coalesce(round(percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms)::numeric, 2) || ' ms p50, ' || count(*) || ' steps', 'no step records') FROM $1 WHERE job_id = $2"; }

# Runs command "$2" timed as run $1 (a file name: the figures go to
# $TMP/$1 and $TMP/$1.cpu), then checks that $3 items are left in the
# library and prints the figures.
timed() {
	c0=$(cpu)
	t0=$(now)
	sh -c "$2" >/dev/null
	t1=$(now)
	c1=$(cpu)
	left=$(sqlr "SELECT count(*) FROM inventory.items WHERE library_id = $L")
	[ "$left" = "$3" ] || { echo "$1: not exact: $left items left, $3 expected" >&2; exit 1; }
	secs "$t0" "$t1" >>"$TMP/$1"
	secs "$c0" "$c1" >>"$TMP/$1.cpu"
	printf '  %-26s %6.3f s, server CPU %5.2f s\n' "$1" "$(secs "$t0" "$t1")" "$(secs "$c0" "$c1")"
}
PQ="$PSQL -d $RUN"
ENG="$BIN --quiet --db '$(conninfo $RUN)'"

prune_delete() {
	copy
	sqlr "SELECT (cleanup.job_transition($J, 'cancel')).phase" >/dev/null
	timed prune.delete "$PQ -c \"DELETE FROM inventory.items i WHERE i.library_id = $L
	   AND NOT EXISTS (SELECT 1 FROM cleanup.manifest m WHERE m.job_id = $J AND m.external_id = i.external_id)\"" "$SEEN"
}
prune_floor() { # $1: off|on
	copy
	floor_setup "$J"
	drive step "$J" "$1" >"$TMP/drive.sql"
	timed "prune.floor${2:-}" "$PQ -f $TMP/drive.sql" "$SEEN"
	[ "$(sqlr "SELECT phase FROM floor.jobs WHERE id = $J")" = completed ] ||
		{ echo "the floor's prune did not complete" >&2; exit 1; }
	echo "    $(p50 floor.steps "$J"), drain steps"
}
prune_server() { # $1: parts left out
	copy
	floor_setup "$J"
	timed "prune.server${1:+-$1}" "$PQ -c \"SET synchronous_commit = off\" -c \"SET floor.skip = '${1:-}'\" \
		-c 'DO \$\$ BEGIN LOOP EXIT WHEN NOT floor.step($J); COMMIT; END LOOP; END \$\$'" "$SEEN"
	[ "$(sqlr "SELECT phase FROM floor.jobs WHERE id = $J")" = completed ] ||
		{ echo "the floor's prune did not complete" >&2; exit 1; }
}
prune_engine() { # $1: off|on
	copy
	timed "prune.engine${2:-}" "$ENG job run $J --synchronous-commit $1" "$SEEN"
	echo "    $(p50 cleanup.job_steps "$J"), final-check pages too"
}
remove_single() {
	copy
	R=$(removal_job single-transaction)
	timed remove.single "$ENG job run $R" 0
}
remove_floor() {
	copy
	R=$(removal_job bounded)
	floor_setup "$R"
	drive remove_step "$R" off >"$TMP/drive.sql"
	timed remove.floor "$PQ -f $TMP/drive.sql" 0
	echo "    $(p50 floor.steps "$R")"
}
remove_server() {
	copy
	R=$(removal_job bounded)
	floor_setup "$R"
	timed remove.server "$PQ -c \"SET synchronous_commit = off\" \
		-c 'DO \$\$ BEGIN LOOP EXIT WHEN NOT floor.remove_step($R); COMMIT; END LOOP; END \$\$'" 0
}
remove_engine() {
	copy
	R=$(removal_job bounded)
	timed remove.engine "$ENG job run $R" 0
	echo "    $(p50 cleanup.job_steps "$R"), the parent's step too"
}

# COUNT=1: the runs below, each in copy $2 of the database, SQL $3 (one
# statement a line) in a single-user backend under callgrind; appends
# "$1 INSTRUCTIONS" to $TMP/ir and keeps the inclusive profile.
count_run() {
	out=$(mktemp -d /tmp/floor-ir.XXXXXX)
	chmod 777 "$out"
	printf '%s\n' "$3" | runuser -u postgres -- valgrind --tool=callgrind --toggle-collect=ExecuteDoStmt \
		--callgrind-out-file="$out/cg" "$(pg_config --bindir)/postgres" --single -D "$DIR/data" \
		-c jit=off -c synchronous_commit=off "$2" >"$out/log" 2>&1 ||
		{ cat "$out/log" >&2; exit 1; }
	! grep -q ERROR "$out/log" || { grep ERROR "$out/log" >&2; exit 1; }
	echo "$1 $(sed -n 's/^summary: //p' "$out/cg")" >>"$TMP/ir"
	callgrind_annotate --inclusive=yes --threshold=100 "$out/cg" >"$DIR/count-$1.txt" 2>/dev/null
	mv "$out/cg" "$DIR/count-$1.cg"
	rm -rf "$out"
}
# The engine's steps of job $1 from a DO loop that commits after each,
# until the job ends, under a runner lease (as `job run` sends them, without
# its round trips; a step without a lease also reads every backend's
# activity, to refuse while another runner's lease is live).
engine_loop() {
	echo "DO \$\$ DECLARE n int := (SELECT coalesce(max(step_no), 0) FROM cleanup.job_steps WHERE job_id = $1); s cleanup.job_steps; BEGIN PERFORM cleanup.runner_open($1, 4242, 'count', 1, 'prune_floor.sh', true, 3600, NULL, false); COMMIT; LOOP n := n + 1; s := cleanup.job_step($1, n, 0, 4242); COMMIT; EXIT WHEN s.phase_after IN ('completed', 'cancelled', 'failed'); END LOOP; END \$\$"
}
# Instructions in function $2 of run $1's profile (inclusive).
incl() {
	awk -v f="$2" '$0 ~ ("[ :]" f " ") || $0 ~ ("[ :]" f "$") { gsub(/,/, "", $1); print $1; exit }' "$DIR/count-$1.txt"
}
count_mode() {
	: >"$TMP/ir"
	mk() { $PSQL -d postgres -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" -c "CREATE DATABASE $1 TEMPLATE cleanup_lab_floor"; }
	for db in cf rs rf re; do $PSQL -d postgres -c "DROP DATABASE IF EXISTS cleanup_lab_floor_$db WITH (FORCE)"; done
	mk cleanup_lab_floor_cd
	$PSQL -d cleanup_lab_floor_cd -Atc "SELECT (cleanup.job_transition($J, 'cancel')).phase" >/dev/null
	mk $RUN
	floor_setup "$J"
	$PSQL -d postgres -c "ALTER DATABASE $RUN RENAME TO cleanup_lab_floor_cf"
	mk cleanup_lab_floor_ce
	mk $RUN
	RS=$(removal_job single-transaction)
	$PSQL -d postgres -c "ALTER DATABASE $RUN RENAME TO cleanup_lab_floor_rs"
	mk $RUN
	RF=$(removal_job bounded)
	floor_setup "$RF"
	$PSQL -d postgres -c "ALTER DATABASE $RUN RENAME TO cleanup_lab_floor_rf"
	mk $RUN
	RE=$(removal_job bounded)
	$PSQL -d postgres -c "ALTER DATABASE $RUN RENAME TO cleanup_lab_floor_re"
	for db in cd cf ce rs rf re; do $PSQL -d cleanup_lab_floor_$db -c CHECKPOINT; done
	"$BIN" --quiet sandbox stop --dir "$DIR" >/dev/null
	echo "== counting (callgrind, single-user backends; minutes)"
	count_run prune.delete cleanup_lab_floor_cd "DO \$\$ BEGIN DELETE FROM inventory.items i WHERE i.library_id = $L AND NOT EXISTS (SELECT 1 FROM cleanup.manifest m WHERE m.job_id = $J AND m.external_id = i.external_id); END \$\$"
	count_run prune.floor cleanup_lab_floor_cf "DO \$\$ BEGIN LOOP EXIT WHEN NOT floor.step($J); COMMIT; END LOOP; END \$\$"
	count_run prune.engine cleanup_lab_floor_ce "$(engine_loop "$J")"
	count_run remove.single cleanup_lab_floor_rs "$(engine_loop "$RS")"
	count_run remove.floor cleanup_lab_floor_rf "DO \$\$ BEGIN LOOP EXIT WHEN NOT floor.remove_step($RF); COMMIT; END LOOP; END \$\$"
	count_run remove.engine cleanup_lab_floor_re "$(engine_loop "$RE")"
	"$BIN" --quiet sandbox start --dir "$DIR" >/dev/null
	for x in "cd $SEEN" "cf $SEEN" "ce $SEEN" "rs 0" "rf 0" "re 0"; do
		set -- $x
		left=$($PSQL -d "cleanup_lab_floor_$1" -Atc "SELECT count(*) FROM inventory.items WHERE library_id = $L")
		[ "$left" = "$2" ] || { echo "count run $1: not exact: $left items left, $2 expected" >&2; exit 1; }
	done
	steps=$($PSQL -d cleanup_lab_floor_ce -Atc "SELECT count(*) FROM cleanup.job_steps WHERE job_id = $J")
	fsteps=$($PSQL -d cleanup_lab_floor_cf -Atc "SELECT count(*) FROM floor.steps WHERE job_id = $J")
	ir() { awk -v r="$1" '$1 == r { print $2 }' "$TMP/ir"; }
	echo "== instructions, every run checked exact (prune: engine $steps steps, floor $fsteps)"
	for r in prune.delete prune.floor prune.engine; do
		printf '   %-16s %14s  %sx the one DELETE\n' "$r" "$(ir $r)" "$(ratio "$(ir $r)" "$(ir prune.delete)")"
	done
	echo "   engine / floor, prune   $(ratio "$(ir prune.engine)" "$(ir prune.floor)")x"
	for r in remove.single remove.floor remove.engine; do
		printf '   %-16s %14s  %sx the single transaction\n' "$r" "$(ir $r)" "$(ratio "$(ir $r)" "$(ir remove.single)")"
	done
	echo "   engine / floor, removal $(ratio "$(ir remove.engine)" "$(ir remove.floor)")x"
	echo "== the prune's instructions a step, inclusive, in: floor, engine, engine - floor"
	# Exported functions only: the server's binary carries no other symbols
	# (static ones, CommitTransaction or plpgsql's exec_stmts, read 0).
	for f in heap_delete heap_lock_tuple ExecInitNode standard_ExecutorStart standard_planner GetCachedPlan \
		AfterTriggerEndQuery ExecConstraints ProcessGUCArray AtEOXact_GUC LockAcquireExtended \
		plpgsql_exec_function; do
		a=$(incl prune.floor "$f"); b=$(incl prune.engine "$f")
		printf '   %-30s %9s %9s %9s\n' "$f" "$(( ${a:-0} / fsteps ))" "$(( ${b:-0} / steps ))" \
			"$(( ${b:-0} / steps - ${a:-0} / fsteps ))"
	done
}
[ "${COUNT:-0}" != 1 ] || { count_mode; exit 0; }

r=1
while [ "$r" -le "$ROUNDS" ]; do
	echo "== round $r (load $(cut -d' ' -f1-3 /proc/loadavg))"
	if [ $((r % 2)) -eq 1 ]; then
		set -- prune_delete "prune_floor off" prune_server "prune_engine off" \
			remove_single remove_floor remove_server remove_engine
	else
		set -- "prune_engine off" prune_server "prune_floor off" prune_delete \
			remove_engine remove_server remove_floor remove_single
	fi
	[ -z "${SYNC:-}" ] || set -- "$@" "prune_floor on -sync" "prune_engine on -sync"
	[ -z "${ABLATE:-}" ] || set -- "$@" "prune_server locks" "prune_server contract" \
		"prune_server verdict" "prune_server record"
	for run in "$@"; do
		$run
	done
	r=$((r + 1))
done

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for what in "" .cpu; do
	if [ -z "$what" ]; then echo "== wall, medians over $ROUNDS rounds"; else echo "== server CPU, medians"; fi
	D=$(median "$TMP/prune.delete$what")
	S=$(median "$TMP/remove.single$what")
	for run in prune.floor prune.server prune.engine prune.floor-sync prune.engine-sync; do
		[ -f "$TMP/$run$what" ] || continue
		M=$(median "$TMP/$run$what")
		printf '   %-28s %6.3f s  %sx the one DELETE (%.3f s)\n' "$run" "$M" "$(ratio "$M" "$D")" "$D"
	done
	F=$(median "$TMP/prune.floor$what")
	echo "   engine / floor, prune        $(ratio "$(median "$TMP/prune.engine$what")" "$F")x"
	for run in remove.floor remove.server remove.engine; do
		M=$(median "$TMP/$run$what")
		printf '   %-28s %6.3f s  %sx the single transaction (%.3f s)\n' "$run" "$M" "$(ratio "$M" "$S")" "$S"
	done
	echo "   engine / floor, removal      $(ratio "$(median "$TMP/remove.engine$what")" "$(median "$TMP/remove.floor$what")")x"
	if [ -n "${ABLATE:-}" ]; then
		A0=$(median "$TMP/prune.server$what")
		for part in locks contract verdict record; do
			A=$(median "$TMP/prune.server-$part$what")
			printf '   prune.server without %-8s %6.3f s  %sx; the part %s%% of the server floor\n' \
				"$part" "$A" "$(ratio "$A" "$D")" "$(echo "scale=1; ($A0 - $A) * 100 / $A0" | bc)"
		done
	fi
done
