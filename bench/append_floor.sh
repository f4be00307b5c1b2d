#!/bin/sh
# The floor of manifest loading (docs/benchmarks-append.md, "The floor"):
# the backend's own CPU time (from /proc, 10 ms ticks) to load IDS
# unordered 20-byte IDs
#
#   copy    COPY into a table keyed like the manifest, one transaction;
#   insert  a prepared plain INSERT ... SELECT unnest($1) of 128 IDs a
#           transaction into the same table: seed 000's 128 IDs a durable
#           call, with nothing of the engine;
#   append  a prepared call of cleanup.job_append, 128 IDs a transaction,
#           on a new collecting prune job;
#
# each in one session of psql (one round trip a call, synchronous_commit
# off: the work, not the disk's flush), ROUNDS rounds in turning order.
# With PARTS=1 also three copies of cleanup.job_append, each without one
# part (made from its installed definition; the script stops if a part
# is no longer where it looks for it): nosub (the optimistic insert
# without its subtransaction), noval (without the validation), nojob
# (the job row read, neither locked nor counted).
# Prints each run and the medians, and the ratios insert / copy (what 128
# IDs a transaction costs by itself) and append / insert (the engine's
# part: validation, the job row, the subtransaction, the function call).
#
#   sh bench/append_floor.sh [BUILD] [IDS (200000)] [ROUNDS (5)]
#
# Uses a sandbox of its own in BUILD/bench-append-sandbox (started and
# stopped here) and database cleanup_lab_append_floor.
set -eu
BUILD=${1:-build}
IDS=${2:-200000}
ROUNDS=${3:-5}
BIN=$BUILD/tui/cleanupctl
DIR=$(cd "$BUILD" && pwd)/bench-append-sandbox
. "$(dirname "$0")/lib_sandbox.sh"
DB=cleanup_lab_append_floor
CONN=$(conninfo $DB)
new_db $DB
"$BIN" --quiet --db "$CONN" seed --servers 1 --libraries 1 --items 1000 >/dev/null
LIB=$($PSQL -d $DB -Atc "SELECT min(id) FROM inventory.libraries")
VARIANTS="copy insert append"
if [ "${PARTS:-0}" = 1 ]; then
	VARIANTS="$VARIANTS nosub noval nojob"
	$PSQL -d $DB <<'EOF'
DO $$
DECLARE
    d text := pg_get_functiondef('cleanup.job_append(bigint, text[])'::regprocedure);
    v text;
    w text;
BEGIN
    -- One copy a part left out; each edit must change the text.
    FOREACH w IN ARRAY ARRAY['nosub', 'noval', 'nojob'] LOOP
        v := replace(d, 'FUNCTION cleanup.job_append(', 'FUNCTION cleanup.ja_' || w || '(');
        IF w = 'nosub' THEN
            v := regexp_replace(v, '\n    BEGIN\n(        INSERT INTO cleanup\.manifest \(job_id, external_id\)\n[^\n]*\n[^\n]*\n)    EXCEPTION WHEN unique_violation THEN.*?\n    END;\n',
                                E'\n\\1');
        ELSIF w = 'noval' THEN
            v := regexp_replace(v, '\n    IF array_position\(p_ids, NULL\).*?\n    END IF;\n', E'\n');
        ELSE
            v := regexp_replace(regexp_replace(v, 'FOR UPDATE SKIP LOCKED;', ';'),
                                '\n    UPDATE cleanup\.jobs\n.*?RETURNING \* INTO job;\n', E'\n');
        END IF;
        IF v = replace(d, 'FUNCTION cleanup.job_append(', 'FUNCTION cleanup.ja_' || w || '(') THEN
            RAISE EXCEPTION 'append_floor.sh: variant % found nothing to leave out in cleanup.job_append', w;
        END IF;
        EXECUTE v;
    END LOOP;
END $$;
EOF
fi

# The IDs (md5 of a sequence: unordered), as a COPY file and as calls of 128.
IDQ="SELECT i, left(md5(i::text), 20) AS id FROM generate_series(1, $IDS) AS i"
$PSQL -d $DB -Atc "SELECT '1' || chr(9) || id FROM ($IDQ) x ORDER BY i" >"$DIR/copy.txt"
$PSQL -d $DB -Atc "SELECT format('EXECUTE c(%L);', array_agg(id ORDER BY i)::text) FROM ($IDQ) x
                    GROUP BY (i - 1) / 128 ORDER BY (i - 1) / 128" >"$DIR/calls.sql"

# One run of variant $1: prints its wall seconds and backend CPU ticks.
run() {
	$PSQL -d $DB -c "DROP TABLE IF EXISTS k" \
		-c "CREATE TABLE k (job_id bigint NOT NULL, external_id text NOT NULL, PRIMARY KEY (job_id, external_id))"
	case $1 in
	copy) body="\\copy k (job_id, external_id) FROM '$DIR/copy.txt'" ;;
	insert) body="PREPARE c(text[]) AS INSERT INTO k (job_id, external_id) SELECT 1, x FROM unnest(\$1) AS x;
\\i $DIR/calls.sql" ;;
	append | nosub | noval | nojob)
		fn=cleanup.job_append
		[ "$1" = append ] || fn=cleanup.ja_$1
		old=$($PSQL -d $DB -Atc "SELECT id FROM cleanup.jobs WHERE phase NOT IN ('completed', 'cancelled')")
		[ -z "$old" ] || "$BIN" --quiet --db "$CONN" job cancel "$old" >/dev/null
		job=$("$BIN" --json --db "$CONN" job create prune --library "$LIB" | jq .id)
		body="PREPARE c(text[]) AS SELECT r.added FROM $fn($job, \$1) AS r;
\\i $DIR/calls.sql" ;;
	esac
	$PSQL -d $DB -c "CHECKPOINT"
	t0=$(date +%s.%N)
	ticks=$($PSQL -d $DB -At <<EOF | awk '/^cpu0/ {a = $2} /^cpu1/ {b = $2} END {print b - a}'
SET synchronous_commit = off;
SELECT pg_backend_pid() AS pid \\gset
\\setenv BACKEND_PID :pid
\\o /dev/null
\\! awk '{print "cpu0", \$14 + \$15}' /proc/\$BACKEND_PID/stat
$body
\\! awk '{print "cpu1", \$14 + \$15}' /proc/\$BACKEND_PID/stat
EOF
)
	t1=$(date +%s.%N)
	echo "$1 $(echo "$t1 - $t0" | bc) $ticks"
}

: >"$DIR/runs"
for r in $(seq 1 "$ROUNDS"); do
	# The variants in turning order: round r starts at the r-th.
	order=$(echo $VARIANTS | awk -v r="$r" '{for (i = 0; i < NF; i++) printf "%s ", $(1 + (i + r - 1) % NF)}')
	for v in $order; do
		line=$(run "$v")
		echo "round $r: $line" | awk '{printf "round %s %-7s wall %6.3f s, backend CPU %5.2f s\n", $2, $3, $4, $5 / 100}'
		echo "$line" >>"$DIR/runs"
	done
done
# Medians of each variant's CPU and wall, and the ratios.
for v in $VARIANTS; do
	n=$(grep -c "^$v " "$DIR/runs")
	echo "$v $(grep "^$v " "$DIR/runs" | awk '{print $3}' | sort -n | awk -v n="$n" 'NR == int((n + 1) / 2)') \
		$(grep "^$v " "$DIR/runs" | awk '{print $2}' | sort -n | awk -v n="$n" 'NR == int((n + 1) / 2)')"
done >"$DIR/medians"
awk -v ids="$IDS" -v rounds="$ROUNDS" '
	{cpu[$1] = $2 / 100; wall[$1] = $3}
	END {
		printf "medians over %d rounds, %d IDs, %d calls of 128:\n", rounds, ids, int((ids + 127) / 128)
		n = split("copy insert append nosub noval nojob", order, " ")
		for (k = 1; k <= n; k++)
			if (order[k] in cpu)
				printf "  %-7s backend CPU %5.2f s, wall %6.3f s\n", order[k], cpu[order[k]], wall[order[k]]
		for (k = 4; k <= n; k++)
			if (order[k] in cpu)
				printf "  job_append without %s: %.0f%% less backend CPU\n",
				       order[k] == "nosub" ? "the subtransaction" : order[k] == "noval" ? "the validation" : "the job row",
				       100 * (1 - cpu[order[k]] / cpu["append"])
		printf "summary: manifest floor: 128 IDs a transaction, plain prepared INSERT / COPY: backend CPU %.2fx; " \
		       "cleanup.job_append / that INSERT: %.2fx; job_append / COPY: %.2fx\n",
		       cpu["insert"] / cpu["copy"], cpu["append"] / cpu["insert"], cpu["append"] / cpu["copy"]
	}' "$DIR/medians"
$PSQL -d postgres -c "DROP DATABASE $DB"
