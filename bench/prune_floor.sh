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
ratio() { echo "scale=2; $1 / $2" | bc; }
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
