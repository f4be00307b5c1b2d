#!/bin/sh
# Where a bounded job's time goes, statement by statement, against the
# one statement it replaces (docs/benchmarks.md, "Floors"): every
# statement the server ran, nested ones included (pg_stat_statements,
# track = all), for
#
#   1. a bounded remove-library of ITEMS items, and the same removal in
#      single-transaction mode on a copy of the same data;
#   2. a bounded prune of another library of ITEMS items, every second
#      item seen, and the one DELETE ... WHERE NOT EXISTS (manifest) of the
#      same rows on a copy.
#
# Each with nobody else connected, on vacuumed, frozen and analyzed data.
# Prints each run's wall time and, per statement, its calls, total time,
# and mean, largest total first. Totals of a statement include the
# statements it ran (a step's call includes everything below it).
#
#   sh bench/step_profile.sh [BUILD] [ITEMS (400000)] [TOP (16)]
#
# Uses a sandbox of its own in BUILD/bench-profile-sandbox (started with
# pg_stat_statements preloaded, stopped at the end), and databases
# cleanup_lab_profile*.
set -eu
BUILD=${1:-build}
ITEMS=${2:-400000}
TOP=${3:-16}
BIN=$BUILD/tui/cleanupctl
DIR=$(cd "$BUILD" && pwd)/bench-profile-sandbox
. "$(dirname "$0")/lib_sandbox.sh"
if [ "$($PSQL -d postgres -Atc "SHOW shared_preload_libraries")" != pg_stat_statements ]; then
	$PSQL -d postgres -c "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"
	"$BIN" --quiet sandbox stop --dir "$DIR" >/dev/null
	"$BIN" --quiet sandbox start --dir "$DIR" >/dev/null
fi
# Nested statements too (the module's settings exist once it is loaded).
$PSQL -d postgres -c "ALTER SYSTEM SET pg_stat_statements.track = 'all'" -c "SELECT pg_reload_conf()" >/dev/null

# The statements of database $1 since the last reset, largest total first.
report() {
	$PSQL -d "$1" -c "SELECT calls, round(total_exec_time::numeric, 1) AS total_ms,
	                          round((total_exec_time / calls)::numeric, 4) AS mean_ms, rows,
	                          left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS statement
	                     FROM pg_stat_statements
	                    WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
	                      AND query NOT LIKE '%pg_stat_statements%'
	                    ORDER BY total_exec_time DESC LIMIT $TOP"
}
reset() { $PSQL -d "$1" -Atc "SELECT pg_stat_statements_reset()" >/dev/null; }
now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc; }

# Runs job $2 of database $1 and reports it.
run_job() {
	reset "$1"
	t0=$(now)
	"$BIN" --quiet --db "$(conninfo "$1")" job run "$2" >/dev/null
	t1=$(now)
	echo "wall: $(secs "$t0" "$t1") s; steps: $($PSQL -d "$1" -Atc "SELECT count(*) || ', ' || round(sum(duration_ms)) || ' ms inside steps' FROM cleanup.job_steps WHERE job_id = $2")"
	report "$1"
}

echo "== data: 1 server, 2 libraries of $ITEMS items (cleanupctl seed), vacuumed, frozen, analyzed"
$PSQL -d postgres -c "DROP DATABASE IF EXISTS cleanup_lab_profile_copy"
new_db cleanup_lab_profile
"$BIN" --quiet --db "$(conninfo cleanup_lab_profile)" seed --servers 1 --libraries 2 --items "$ITEMS" >/dev/null
$PSQL -d cleanup_lab_profile -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" -c "VACUUM (FREEZE, ANALYZE)" \
	-c "CHECKPOINT"
L1=$($PSQL -d cleanup_lab_profile -Atc "SELECT min(id) FROM inventory.libraries")
L2=$($PSQL -d cleanup_lab_profile -Atc "SELECT max(id) FROM inventory.libraries")
$PSQL -d postgres -c "CREATE DATABASE cleanup_lab_profile_copy TEMPLATE cleanup_lab_profile"

echo
echo "== 1a. remove-library $L1, bounded"
J=$("$BIN" --json --db "$(conninfo cleanup_lab_profile)" job create remove-library --library "$L1" --mode bounded | jq .id)
run_job cleanup_lab_profile "$J"
echo
echo "== 1b. remove-library $L1, single-transaction (a copy of the same data)"
$PSQL -d cleanup_lab_profile_copy -c "CHECKPOINT"
J=$("$BIN" --json --db "$(conninfo cleanup_lab_profile_copy)" job create remove-library --library "$L1" \
	--mode single-transaction | jq .id)
run_job cleanup_lab_profile_copy "$J"

echo
echo "== 2a. prune of library $L2, every second item seen, bounded"
J=$("$BIN" --json --db "$(conninfo cleanup_lab_profile)" job create prune --library "$L2" | jq .id)
$PSQL -d cleanup_lab_profile -Atc "SELECT external_id FROM inventory.items WHERE library_id = $L2 AND id % 2 = 0" \
	>"$DIR/seen"
"$BIN" --quiet --db "$(conninfo cleanup_lab_profile)" job append "$J" <"$DIR/seen" >/dev/null
"$BIN" --quiet --db "$(conninfo cleanup_lab_profile)" job seal "$J" --expected "$(wc -l <"$DIR/seen")" >/dev/null
$PSQL -d cleanup_lab_profile -c "VACUUM (ANALYZE)" -c "CHECKPOINT"
$PSQL -d postgres -c "DROP DATABASE cleanup_lab_profile_copy" \
	-c "CREATE DATABASE cleanup_lab_profile_copy TEMPLATE cleanup_lab_profile"
run_job cleanup_lab_profile "$J"
echo
echo "== 2b. the one DELETE of the same rows (a copy of the same data, the job cancelled first:"
echo "   the library open, as a sync finds it; bench/sql/anchor_open.sql)"
$PSQL -d cleanup_lab_profile_copy -Atc "SELECT (cleanup.job_transition($J, 'cancel')).phase" >/dev/null
reset cleanup_lab_profile_copy
t0=$(now)
$PSQL -d cleanup_lab_profile_copy -c "DELETE FROM inventory.items i WHERE i.library_id = $L2
   AND NOT EXISTS (SELECT 1 FROM cleanup.manifest m WHERE m.job_id = $J AND m.external_id = i.external_id)"
t1=$(now)
echo "wall: $(secs "$t0" "$t1") s"
report cleanup_lab_profile_copy
$PSQL -d postgres -c "DROP DATABASE cleanup_lab_profile" -c "DROP DATABASE cleanup_lab_profile_copy"
