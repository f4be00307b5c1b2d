#!/bin/bash
# The privilege model through the real binary (issue 9, defect 4;
# docs/roles.md): login roles in cleanup_writer, cleanup_runner and
# cleanup_console run `cleanupctl writer`, the job commands and the
# reports, and each is refused what its role does not grant. Two installs
# into two databases at once both succeed (roles are cluster-wide).
. "$(dirname "$0")/lib_foundation.sh"

db_fresh cleanup_lab_t_cli_roles
sql "SELECT cleanup.seed_demo(2, 2, 10)" >/dev/null
# Server 1: libraries 1, 2; server 2: libraries 3, 4.
BASE=$DB

# Login roles of this test (cluster-wide; other tests run at the same time).
for pair in t_cli_writer:cleanup_writer t_cli_runner:cleanup_runner t_cli_console:cleanup_console; do
	role=${pair%%:*}
	group=${pair#*:}
	psql -X -q "$ADMIN" -v ON_ERROR_STOP=1 -c "DO \$\$ BEGIN
	  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$role') THEN
	    BEGIN CREATE ROLE $role LOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
	  END IF; END \$\$" -c "GRANT $group TO $role" 2>/dev/null || { echo "cannot create role $role"; exit 1; }
done
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
DB=$WRITER
run --json writer --server 1 --ops 40 --rate 0 --seed 3
DB=$BASE
expect 0
same "$(jq -r '.ops' <<<"$OUT")" "40" "writer ops"
[ "$(jq -r '.ok' <<<"$OUT")" -gt 0 ] || fail "no write of the restricted writer was accepted"
[ "$(jq -r '.rejections.CUA01 // 0' <<<"$OUT")" -gt 0 ] || fail "no write into the fenced library was rejected"
# No access to cleanup.events: rejections are counted, not logged, and
# nothing failed trying.
same "$(jq -r '.logged' <<<"$OUT")" "0" "restricted writer logged nothing"
same "$(jq -r '.log_failures' <<<"$OUT")" "0" "restricted writer did not try to log"
same "$(sql "SELECT count(*) FROM cleanup.events")" "$events0" "no event rows from the restricted writer"

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
run job cancel "$R"
expect 4 "already ended"
DB=$BASE
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
