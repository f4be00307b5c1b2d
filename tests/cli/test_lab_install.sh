#!/usr/bin/env bash
# The lab's SQL installs only with the lab.
#
# 1. `cleanupctl install` alone puts nothing of the lab in the database: no
#    schema cleanup_lab, no seed_demo anywhere.
# 2. The lab's own step (`cleanupctl seed` takes it before it seeds)
#    installs cleanup_lab.seed_demo, owner only; the engine's contract does
#    not drift (`install` again changes nothing, cleanup.contract_assert
#    passes), and a second lab step applies nothing (no DDL: the contract
#    stays clean). The lab's step leaves the contract clean itself (it
#    compares it once, as the next step would).
# 4. A contract that drifted stays dirty through the lab's step: the step
#    still succeeds, and the engine's steps still refuse (CU403).
# 3. Upgrade: a database installed before the seeder moved has
#    cleanup.seed_demo among the engine's functions; installing this bundle
#    drops it, keeps the lab's, and records a contract that holds.
source "$(dirname "$0")/lib_foundation.sh"
bad() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

NAME=cleanup_lab_lab_install
psql -X -q "$ADMIN" -c "DROP DATABASE IF EXISTS $NAME WITH (FORCE)" -c "CREATE DATABASE $NAME" 2>/dev/null
DB="host=$SOCK port=$PORT dbname=$NAME user=postgres"
run install
[ "$RC" = 0 ] || { echo "FAIL: install exited $RC: $ERR"; exit 1; }

# 1.
[ "$(sql "SELECT count(*) FROM pg_proc WHERE proname = 'seed_demo'")" = 0 ] ||
	bad "install alone installed a seed_demo: $(sql "SELECT string_agg(oid::regprocedure::text, ', ') FROM pg_proc WHERE proname = 'seed_demo'")"
[ "$(sql "SELECT count(*) FROM pg_namespace WHERE nspname = 'cleanup_lab'")" = 0 ] ||
	bad "install alone created schema cleanup_lab"

# 2.
run seed --servers 1 --libraries 2 --items 10
[ "$RC" = 0 ] || bad "seed (the lab's step) exited $RC: $ERR"
got=$(sql "SELECT string_agg(p.oid::regprocedure::text || ' ' || p.prosecdef, ', ') FROM pg_proc p WHERE p.proname = 'seed_demo'")
[ "$got" = "cleanup_lab.seed_demo(integer,integer,bigint,integer) true" ] || bad "after the lab's step, seed_demo is: $got"
[ "$(sql "SELECT has_schema_privilege('public', 'cleanup_lab', 'USAGE')")" = f ] || bad "PUBLIC may use schema cleanup_lab"
[ "$(sql "SELECT count(*) FROM inventory.items")" = 20 ] || bad "seed wrote $(sql "SELECT count(*) FROM inventory.items") items, not 20"
[ "$(sql "SELECT dirty FROM cleanup.schema_contract")" = f ] ||
	bad "the lab's step left the contract dirty: $(sql "SELECT dirty_reason FROM cleanup.schema_contract")"
run install
[ "$RC" = 0 ] && grep -q "nothing changed" <<<"$OUT$ERR" || bad "install after the lab's step: exit $RC: $OUT $ERR"
sql "SELECT cleanup.contract_assert()" >/dev/null 2>"$TMPD/assert.err" || bad "the contract drifted with the lab: $(cat "$TMPD/assert.err")"
[ "$(sql "SELECT dirty FROM cleanup.schema_contract")" = f ] || bad "the contract stays dirty after a clean comparison"
run seed --servers 0 --libraries 0 --items 0
[ "$RC" = 0 ] || bad "a second lab step exited $RC: $ERR"
[ "$(sql "SELECT dirty FROM cleanup.schema_contract")" = f ] || bad "a second lab step ran DDL (the contract is dirty)"

# 3.
sql "CREATE FUNCTION cleanup.seed_demo(p_servers int, p_libraries int, p_items bigint, p_dependents int DEFAULT 0)
     RETURNS jsonb LANGUAGE sql AS \$\$ SELECT '{}'::jsonb \$\$" >/dev/null
sql "UPDATE cleanup.schema_info SET bundle_sha256 = 'an older bundle'" >/dev/null
run install
[ "$RC" = 0 ] || bad "the upgrade exited $RC: $ERR"
got=$(sql "SELECT string_agg(p.oid::regprocedure::text, ', ' ORDER BY 1) FROM pg_proc p WHERE p.proname = 'seed_demo'")
[ "$got" = "cleanup_lab.seed_demo(integer,integer,bigint,integer)" ] || bad "after the upgrade, seed_demo is: $got"
sql "SELECT cleanup.contract_assert()" >/dev/null 2>"$TMPD/assert.err" || bad "the upgraded contract does not hold: $(cat "$TMPD/assert.err")"
run seed --servers 1 --libraries 1 --items 5
[ "$RC" = 0 ] || bad "seed after the upgrade exited $RC: $ERR"

# 4.
sql "ALTER TABLE inventory.items ADD COLUMN t_lab_drift int" >/dev/null
sql "COMMENT ON SCHEMA cleanup_lab IS 'an older lab bundle'" >/dev/null
run seed --servers 0 --libraries 0 --items 0
[ "$RC" = 0 ] || bad "the lab's step on a drifted contract exited $RC: $ERR"
[ "$(sql "SELECT dirty FROM cleanup.schema_contract")" = t ] || bad "the lab's step cleared a drifted contract's mark"
[ "$(sql "SELECT count(*) FROM pg_description WHERE objoid = 'cleanup_lab'::regnamespace AND description LIKE 'cleanupctl lab bundle %'")" = 1 ] ||
	bad "the lab's step on a drifted contract did not record its bundle"
sql "SELECT cleanup.contract_assert()" >/dev/null 2>"$TMPD/assert.err" && bad "a drifted contract passed after the lab's step"
grep -q "schema contract drift" "$TMPD/assert.err" || bad "the drifted contract's refusal: $(cat "$TMPD/assert.err")"

psql -X -q "$ADMIN" -c "DROP DATABASE IF EXISTS $NAME WITH (FORCE)" >/dev/null 2>&1
if [ "$FAILS" -gt 0 ]; then
	echo "$FAILS failed"
	exit 1
fi
echo "lab install: install alone has no lab; the lab's step adds cleanup_lab.seed_demo without drift and leaves the contract clean, a drifted one dirty; an upgrade drops cleanup.seed_demo"
