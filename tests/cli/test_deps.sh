#!/bin/bash
# cleanupctl deps through the real binary: the bounded walk on a 13-table
# chain with 3 foreign keys per level and a loop back (about 300 ms at
# the default depth 16, limit 10 s, where path enumeration took 82-112 s; the time is
# printed as a "bench:" line), gaps named in text and --json, the
# fingerprint (stable without DDL, changed by DISABLE TRIGGER ALL), the
# offline report without a database, and bad input (exit 2, nothing read).
. "$(dirname "$0")/lib_foundation.sh"

db_fresh cleanup_lab_t_cli_deps
sql "DO \$\$ DECLARE k int; prev text := 'inventory.items'; BEGIN FOR k IN 1..13 LOOP
       EXECUTE format('CREATE TABLE public.chain_%s (id bigint PRIMARY KEY, a bigint REFERENCES %s,
                       b bigint REFERENCES %s, c bigint REFERENCES %s)', lpad(k::text, 2, '0'), prev, prev, prev);
       prev := format('public.chain_%s', lpad(k::text, 2, '0')); END LOOP; END \$\$" >/dev/null
sql "ALTER TABLE public.chain_01 ADD COLUMN z bigint REFERENCES public.chain_13" >/dev/null

CURRENT="deps: 13x3 chain, depth 16, bounded"
t0=$(date +%s%N)
run deps
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
echo "bench: cleanupctl deps on the 13x3 chain with a loop, default depth 16: ${ms} ms (before: 112 s)"
expect 0 "49 edges" "gap: cycle: public.chain_01 -> public.chain_02" "chain_01_z_fkey" "limits: depth 16"
# The limit is ten times the figure on a quiet machine (about 300 ms), so
# that a machine busy with other work passes, and still a hundredth of the
# path enumeration it guards against.
[ "$ms" -lt 10000 ] || fail "deps took ${ms} ms (limit 10000)"

CURRENT="deps --json: gaps and limits"
run --json deps
expect 0
same "$(jq -c '[.source, (.edges | length), .gaps[0].kind, .limits.max_depth, .limits.max_edges]' <<<"$OUT")" \
	'["catalog",49,"cycle",16,4096]' "deps --json shape"
same "$(jq -r '[.edges[] | select(.referencing == "public.chain_02" and .referenced == "public.chain_01")] | length' <<<"$OUT")" \
	3 "three keys between the same tables, three edges"
fp1=$(jq -r .fingerprint <<<"$OUT")

CURRENT="deps: a limit reached is a gap naming what was left out"
run deps --max-tables 8
expect 0 "gap: table limit 8:" "public.chain_"
run --json deps --max-depth 5
expect 0
same "$(jq -r '.gaps[] | select(.kind == "depth-limit") | .left_out.constraints[0]' <<<"$OUT")" \
	"public.chain_06.chain_06_a_fkey" "depth-limit gap names the constraint left out"

CURRENT="deps: fingerprint stable, changed by disabled RI triggers"
run --json deps
same "$(jq -r .fingerprint <<<"$OUT")" "$fp1" "fingerprint without DDL"
sql "ALTER TABLE public.chain_05 DISABLE TRIGGER ALL" >/dev/null
run --json deps
expect 0
[ "$(jq -r .fingerprint <<<"$OUT")" != "$fp1" ] || fail "fingerprint unchanged after DISABLE TRIGGER ALL"
same "$(jq -r '[.edges[] | select(.referencing == "public.chain_05") | .enforced] | unique | join(",")' <<<"$OUT")" \
	false "chain_05's keys not enforced"
run deps
expect 0 "[not enforced: RI triggers " "public.chain_05 RI_FKey_check_ins disabled"
sql "ALTER TABLE public.chain_05 ENABLE TRIGGER ALL" >/dev/null
run --json deps
same "$(jq -r .fingerprint <<<"$OUT")" "$fp1" "fingerprint after ENABLE TRIGGER ALL"

CURRENT="deps --offline: no database read"
REALDB=$DB
DB="host=/nonexistent/socket port=1 dbname=cleanup_lab_nowhere user=nobody"
run deps --offline
expect 0 "Offline snapshot of the embedded sql/ bundle" "inventory.items(library_id)" "Parser limits:"
run --json deps --offline --sql-dir "$CLEANUP_SOURCE_DIR/sql"
expect 0
same "$(jq -c '[.source, (.parser_limits | length > 3), ([.edges[].constraint_name] | index("items_library_id_fkey") != null)]' <<<"$OUT")" \
	'["offline",true,true]' "deps --offline --json"

CURRENT="deps: bad input"
run deps --max-edges 0
expect 2 "--max-edges" "1 to 100000"
run deps --max-ms 700000
expect 2 "--max-ms"
run deps --sql-dir /tmp
expect 2 "--sql-dir needs --offline"
run deps --offline --sql-dir /nonexistent/sql
expect 2 "/nonexistent/sql"
run deps --max-depth 3 --max-depth 4
expect 2 "given twice"
DB=$REALDB

finish
