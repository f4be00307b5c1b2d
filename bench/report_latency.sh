#!/bin/sh
# What an operator waits for (docs/benchmarks.md, "Reports"): the wall
# time of the report commands, each a new process and session as typed at
# a prompt, and the server time of a job's document in a session that
# already made one (a runner's second look, `status --watch`, the worker).
#
#   cli     `cleanupctl jobs`, `status`, `--json status` and `job show`
#           (its 20 newest steps), ROUNDS times each, in turning order;
#           medians in ms
#   session pgbench, one connection, 300 transactions each: job_get.sql
#           (the job's row and document, cleanup.job_text_columns) and
#           jobs_list.sql (every unfinished job and the 50 newest);
#           mean latency in ms
#
# On 3 servers x 3 libraries x 2,000 items with 48 jobs: 45 created and
# cancelled, 3 remove-library run to completion (the last one shown:
# 17 steps).
#
#   sh bench/report_latency.sh [BUILD] [ROUNDS (7)]
#
# Uses a sandbox of its own in BUILD/bench-report-sandbox (started and
# stopped here) and database cleanup_lab_report_latency.
set -eu
BUILD=${1:-build}
ROUNDS=${2:-7}
BIN=$BUILD/tui/cleanupctl
SRC=$(cd "$(dirname "$0")/.." && pwd)
DIR=$(cd "$BUILD" && pwd)/bench-report-sandbox
. "$(dirname "$0")/lib_sandbox.sh"
DB=cleanup_lab_report_latency
CONN=$(conninfo $DB)
new_db $DB
"$BIN" --quiet --db "$CONN" seed --servers 3 --libraries 3 --items 2000 >/dev/null
for lib in $($PSQL -d $DB -Atc "SELECT id FROM inventory.libraries ORDER BY id"); do
	for k in 1 2 3 4 5; do
		job=$("$BIN" --db "$CONN" --json job create prune --library "$lib" | jq -r .id)
		"$BIN" --quiet --db "$CONN" job cancel "$job" >/dev/null
	done
done
for lib in $($PSQL -d $DB -Atc "SELECT min(id) FROM inventory.libraries GROUP BY server_id ORDER BY 1"); do
	job=$("$BIN" --db "$CONN" --json job create remove-library --library "$lib" | jq -r .id)
	"$BIN" --quiet --db "$CONN" job run "$job" >/dev/null
done
$PSQL -d $DB -c "VACUUM ANALYZE"
JOBS=$($PSQL -d $DB -Atc "SELECT count(*) FROM cleanup.jobs")
STEPS=$($PSQL -d $DB -Atc "SELECT count(*) FROM cleanup.job_steps WHERE job_id = $job")
echo "report_latency: $JOBS jobs, job $job shown ($STEPS steps), build $BUILD, $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo '?')"

# Milliseconds of wall time of one command.
ms() {
	t0=$(date +%s%N)
	"$@" >/dev/null
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
: >"$DIR/report.cli"
r=1
while [ $r -le "$ROUNDS" ]; do
	echo "jobs $(ms "$BIN" --db "$CONN" jobs)" >>"$DIR/report.cli"
	echo "status $(ms "$BIN" --db "$CONN" status)" >>"$DIR/report.cli"
	echo "status_json $(ms "$BIN" --db "$CONN" --json status)" >>"$DIR/report.cli"
	echo "job_show $(ms "$BIN" --db "$CONN" job show "$job")" >>"$DIR/report.cli"
	r=$((r + 1))
done
for what in jobs status status_json job_show; do
	printf 'cli %-12s median %s ms over %s\n' "$what" "$(awk -v w=$what '$1 == w { print $2 }' "$DIR/report.cli" | median)" "$ROUNDS"
done

# pgbench scripts: the queries as the CLI sends them ($1 -> :job).
sed "s/\$1/$job/g" "$SRC/sql/queries/job_get.sql" >"$DIR/job_get.pgb"
sed 's/\$1/50/g' "$SRC/sql/queries/jobs_list.sql" >"$DIR/jobs_list.pgb"
for q in job_get jobs_list; do
	lat=$(pgbench -n -h "$SOCK" -p "$PORT" -U postgres -c 1 -t 300 -f "$DIR/$q.pgb" "$DB" 2>&1 |
		awk '/latency average/ { print $4 }')
	printf 'session %-10s mean %s ms over 300\n' "$q" "$lat"
done
