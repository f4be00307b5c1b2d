#!/bin/bash
# The privilege model through the real binary 
# (docs/roles.md): login roles in cleanup_writer, cleanup_runner and
# cleanup_console run `cleanupctl writer`, the job commands and the
# reports, and each is refused what its role does not grant. Two installs
# into two databases at once both succeed (roles are cluster-wide).
. "$(dirname "$0")/lib_foundation.sh"

db_fresh cleanup_lab_t_cli_roles
sql "SELECT cleanup_lab.seed_demo(2, 2, 10)" >/dev/null
# Server 1: libraries 1, 2; server 2: libraries 3, 4.
BASE=$DB

# Login roles of this test (cluster-wide; other tests run at the same time).
login_role t_cli_writer cleanup_writer
login_role t_cli_runner cleanup_runner
login_role t_cli_console cleanup_console
WRITER="$BASE user=t_cli_writer"
RUNNER="$BASE user=t_cli_runner"
CONSOLE="$BASE user=t_cli_console"

CURRENT="install: the four roles"
same "$(sql "SELECT string_agg(rolname, ',' ORDER BY rolname) FROM pg_roles
             WHERE rolname LIKE 'cleanup\_%' AND NOT rolcanlogin")" \
	"cleanup_console,cleanup_owner,cleanup_runner,cleanup_writer" "roles created by install, NOLOGIN"

# Library 1 is fenced by a sealed prune job (created as the superuser).
J=$(sql "SELECT id FROM cleanup.job_create('prune', 1)")
sql "SELECT cleanup.job_seal($J, 0)" >/dev/null

CURRENT="writer role: cleanupctl writer"
events0=$(sql "SELECT count(*) FROM cleanup.events")
DB=$WRITER run --json writer --server 1 --ops 40 --rate 0 --seed 3
expect 0
same "$(jq -r '.ops' <<<"$OUT")" "40" "writer ops"
[ "$(jq -r '.ok' <<<"$OUT")" -gt 0 ] || fail "no write of the restricted writer was accepted"
[ "$(jq -r '.rejections.CUA01 // 0' <<<"$OUT")" -gt 0 ] || fail "no write into the fenced library was rejected"
# No access to cleanup.events: rejections are counted, not logged, and
# nothing failed trying.
same "$(jq -r '.logged' <<<"$OUT")" "0" "restricted writer logged nothing"
same "$(jq -r '.log_failures' <<<"$OUT")" "0" "restricted writer did not try to log"
same "$(sql "SELECT count(*) FROM cleanup.events")" "$events0" "no event rows from the restricted writer"

CURRENT="writer role: a watched library, through the gateway (issue 8)"
# Library 2 (server 1, open) is watched by the count cache: a writer login
# reaches its gateway in schema inventory (inventory.write_items), never
# schema cleanup; its plain SQL is refused (CU410) with a hint naming the
# gateway; a bad batch is refused naming the value and the rule, and
# nothing is written; the cache's count stays equal to count(*).
settle() {
	local i st
	for i in 1 2 3 4 5 6 7 8; do
		st=$(sql "SELECT cleanup.count_visit($1) ->> 'state'")
		[ "$st" = fresh ] && break
	done
	sql "SELECT (cleanup.count_visit($1) ->> 'count')"
}
same "$(settle 2)" "$(sql "SELECT count(*) FROM inventory.items WHERE library_id = 2")" "library 2 watched, fresh"
maxid=$(sql "SELECT max(id) FROM inventory.items")
DB=$WRITER run --json writer --server 1 --ops 40 --rate 0 --seed 4
expect 0
same "$(jq -r '.gateway' <<<"$OUT")" "true" "restricted writer uses the gateway"
same "$(jq -r '.rejections.CU410 // 0' <<<"$OUT")" "0" "no write of the restricted writer refused for want of locks"
[ "$(jq -r '.inserted + .updated + .moved' <<<"$OUT")" -gt 0 ] || fail "no write of the restricted writer was accepted"
same "$(settle 2)" "$(sql "SELECT count(*) FROM inventory.items WHERE library_id = 2")" \
	"library 2: the cache's count after the writer's run equals count(*)"
n2=$(sql "SELECT count(*) FROM inventory.items WHERE library_id = 2")
[ "$(sql "SELECT count(*) FROM inventory.items WHERE library_id = 2 AND id > $maxid")" -gt 0 ] ||
	fail "the restricted writer wrote nothing into the watched library 2"
out=$(psql -X -q -v VERBOSITY=verbose "$WRITER" -c "INSERT INTO inventory.items (library_id, external_id) VALUES (2, 'plain')" 2>&1)
case "$out" in *"CU410"*"watched by the count cache"*"HINT:"*"inventory.write_items(jsonb)"*) ;;
*) fail "plain write of the writer role into a watched library: $out" ;; esac
out=$(psql -X -q -v VERBOSITY=verbose "$WRITER" -c "SELECT inventory.write_items('[{\"op\": \"insert\", \"library_id\": 2, \"external_id\": \"ok\"}, {\"op\": \"insert\", \"library_id\": 2, \"external_id\": \"bad\", \"updated_at\": \"1999-01-01\"}]')" 2>&1)
case "$out" in *"CU110"*'"updated_at" 1999-01-01 is out of range (2000-01-01 to a day from now)'*) ;;
*) fail "bad gateway batch of the writer role: $out" ;; esac
out=$(psql -X -q -t -A "$WRITER" -c "BEGIN" -c "SELECT inventory.count_declare(ARRAY[2]::bigint[])" \
	-c "INSERT INTO inventory.items (library_id, external_id) VALUES (2, 'declared')" -c "COMMIT" 2>&1) ||
	fail "declared plain write of the writer role: $out"
same "$(sql "SELECT count(*) FROM inventory.items WHERE library_id = 2")" "$((n2 + 1))" \
	"library 2: only the declared write landed"
same "$(sql "SELECT count(*) FROM inventory.items WHERE external_id IN ('plain', 'ok', 'bad')")" "0" \
	"nothing of the refused writes"
same "$(psql -X -q -t -A "$WRITER" -c "SELECT has_schema_privilege('cleanup', 'USAGE')")" "f" \
	"the writer role still has no USAGE on schema cleanup"
out=$(psql -X -q "$WRITER" -c "SELECT cleanup.write_items('[]')" 2>&1)
case "$out" in *"permission denied for schema cleanup"*) ;; *) fail "writer called cleanup.write_items: $out" ;; esac
same "$(settle 2)" "$((n2 + 1))" "library 2: the cache's count after the declared write"
sql "SELECT cleanup.count_release(slot) FROM cleanup.count_registry WHERE library_id = 2" >/dev/null

CURRENT="writer role: the defect 4 exploit"
DB=$WRITER
out=$(psql -X -q "$WRITER" -c "UPDATE cleanup.library_admission SET state = 'open' WHERE library_id = 1" 2>&1)
case "$out" in *"permission denied for schema cleanup"*) ;; *) fail "writer reopened a fenced library: $out" ;; esac
out=$(psql -X -q "$WRITER" -c "INSERT INTO inventory.items (library_id, external_id) VALUES (1, 'late')" 2>&1)
case "$out" in *"is draining"*) ;; *) fail "write into the fenced library: $out" ;; esac
DB=$BASE
same "$(sql "SELECT state FROM cleanup.library_admission WHERE library_id = 1")" "draining" "library 1 stays fenced"

CURRENT="runner role: a removal end to end"
DB=$RUNNER
run --json job create remove-library --library 3
expect 0
R=$(jq -r .id <<<"$OUT")
run job run "$R"
expect 0 "completed"
run job run "$J"
expect 0 "completed"
DB=$BASE
# The runner login ran the prune's first pass in external-ID order (its
# drain steps record key ranges), and every item went (nothing was seen).
[ "$(sql "SELECT count(*) FROM cleanup.job_steps WHERE job_id = $J AND action = 'drain' AND pass_no = 1
          AND check_to IS NOT NULL")" -gt 0 ] || fail "the runner's prune did not walk external IDs"
same "$(sql "SELECT count(*) FROM inventory.items WHERE library_id = 1 AND id <= (SELECT high_water_id FROM cleanup.jobs WHERE id = $J)")" \
	"0" "the runner's prune deleted every unseen item"
DB=$RUNNER run job cancel "$R"
expect 4 "already ended"
same "$(sql "SELECT count(*) FROM inventory.libraries WHERE id = 3")" "0" "library 3 removed by the runner"
same "$(sql "SELECT created_by FROM cleanup.jobs WHERE id = $R")" "t_cli_runner" "created_by is the login role"
out=$(psql -X -q "$RUNNER" -c "UPDATE cleanup.jobs SET phase = 'draining' WHERE id = $R" 2>&1)
case "$out" in *"permission denied for table jobs"*) ;; *) fail "runner updated cleanup.jobs: $out" ;; esac
out=$(psql -X -q "$RUNNER" -c "DELETE FROM inventory.items WHERE library_id = 4" 2>&1)
case "$out" in *"permission denied for table items"*) ;; *) fail "runner deleted inventory: $out" ;; esac

CURRENT="console role: reports, no actions"
DB=$CONSOLE
for args in "status" "jobs" "job show $R"; do
	# shellcheck disable=SC2086
	run --json $args
	expect 0
	jq -e . <<<"$OUT" >/dev/null || fail "console: $args --json is not one JSON document"
done
before=$(DB=$BASE fingerprint)
run job create prune --library 4
expect 1 "permission denied for function job_create"
run job step "$R"
expect 1 "permission denied"
same "$(DB=$BASE fingerprint)" "$before" "data changed by the console role"
DB=$BASE

CURRENT="runner and console roles: deps (dependency evidence)"
# cleanupctl deps calls cleanup.dependency_evidence(int, int, int, int):
# both read-only roles may run it (docs/roles.md), in text and --json, and
# see the same evidence as the owner.
owner_fp=$(psql -X -q -t -A "$BASE" -c "SELECT cleanup.dependency_evidence(16, 64, 4096, 2000)->>'fingerprint'")
[ ${#owner_fp} -eq 64 ] || fail "owner's fingerprint: $owner_fp"
for who in RUNNER CONSOLE; do
	DB=${!who}
	CURRENT="$who: deps"
	run deps
	expect 0 "items"
	CURRENT="$who: deps --json"
	run --json deps
	expect 0
	same "$(jq -r '.fingerprint' <<<"$OUT" 2>/dev/null)" "$owner_fp" "$who: deps --json fingerprint (as the owner's)"
	CURRENT="$who: deps --max-depth 2 --json"
	run --json deps --max-depth 2 --max-tables 8
	expect 0
	jq -e '.edges | type == "array"' <<<"$OUT" >/dev/null || fail "$who: deps --json has no edges array"
done
DB=$BASE

CURRENT="install: two databases at once"
psql -X -q "$ADMIN" -c "DROP DATABASE IF EXISTS cleanup_lab_t_cli_roles_a WITH (FORCE)" \
	-c "DROP DATABASE IF EXISTS cleanup_lab_t_cli_roles_b WITH (FORCE)" \
	-c "CREATE DATABASE cleanup_lab_t_cli_roles_a" -c "CREATE DATABASE cleanup_lab_t_cli_roles_b" 2>/dev/null
"$CLEANUPCTL" --quiet --db "host=$SOCK port=$PORT dbname=cleanup_lab_t_cli_roles_a user=postgres" install \
	>"$TMPD/a.out" 2>&1 &
pa=$!
"$CLEANUPCTL" --quiet --db "host=$SOCK port=$PORT dbname=cleanup_lab_t_cli_roles_b user=postgres" install \
	>"$TMPD/b.out" 2>&1 &
pb=$!
wait "$pa"
RC=$?
OUT=$(cat "$TMPD/a.out")
ERR=""
expect 0
wait "$pb"
RC=$?
OUT=$(cat "$TMPD/b.out")
expect 0
psql -X -q "$ADMIN" -c "DROP DATABASE IF EXISTS cleanup_lab_t_cli_roles_a WITH (FORCE)" \
	-c "DROP DATABASE IF EXISTS cleanup_lab_t_cli_roles_b WITH (FORCE)" 2>/dev/null

finish
