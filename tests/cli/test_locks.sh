#!/bin/bash
# cleanupctl locks through the real binary: exit codes, the text tree and
# the --json document, with nothing contended and with a blocking pair
# (a job's session holds a row lock, a writer waits; observed with
# pg_blocking_pids(), never by sleeping on a guess).
. "$(dirname "$0")/lib_foundation.sh"

db_fresh cleanup_lab_t_cli_locks
sql "SELECT cleanup_lab.seed_demo(1, 1, 3)" >/dev/null

CURRENT="locks: usage"
run locks extra
expect 2 "unexpected argument \"extra\""

CURRENT="locks: nothing contended"
run locks
expect 0 "no backend is blocked or blocking"
run --json locks
expect 0
same "$(jq -c '[.database, .backends, .blocked]' <<<"$OUT")" '["cleanup_lab_t_cli_locks",[],0]' "locks --json, idle"

CURRENT="locks: a blocking pair"
# backend_pid WHERE: polls (10 s) for the pid of this database's backend
# matching WHERE (pg_stat_activity); prints it, or nothing.
backend_pid() {
	local pid=""
	for _ in $(seq 1 500); do
		pid=$(sql "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND $1")
		[ -n "$pid" ] && break
		sleep 0.02
	done
	echo "$pid"
}
# The holder keeps its transaction open until its stdin closes.
session_start "$DB application_name=cleanupctl:job:31:step" \
	"BEGIN; UPDATE inventory.items SET title = 'held' WHERE id = 1; SELECT 1;"
hpid=$(backend_pid "application_name = 'cleanupctl:job:31:step' AND state = 'idle in transaction'")
[ -n "$hpid" ] || fail "the holder did not start"
PGAPPNAME="cleanupctl:writer:1" psql -X -q "$DB" -c "UPDATE inventory.items SET title = 'waiting' WHERE id = 1" >/dev/null 2>&1 7>&- &
wpsql=$!
wpid=$(backend_pid "application_name = 'cleanupctl:writer:1' AND cardinality(pg_blocking_pids(pid)) > 0")
[ -n "$wpid" ] || fail "the writer was not blocked"

run locks
expect 0 "2 backends, 1 blocked" "cleanupctl:job:31:step [job 31]" "ShareLock on transactionid (inventory.items)"
grep -q "^$hpid " <<<"$OUT" || fail "the holder is not a root of the tree"
grep -q "^└─ $wpid .*cleanupctl:writer:1" <<<"$OUT" || fail "the writer is not indented under the holder"
[ "$(grep -n "^$hpid " <<<"$OUT" | cut -d: -f1)" -lt "$(grep -n "$wpid" <<<"$OUT" | cut -d: -f1)" ] ||
	fail "the blocker is not listed before the backend it blocks"

run --json locks
expect 0
same "$(jq -r '.blocked' <<<"$OUT")" "1" "locks --json: blocked"
same "$(jq -c --argjson p "$wpid" '.backends[] | select(.pid == $p) | [.blocked_by, .job_id, .locktype, .mode, .relation, .wait_event_type]' <<<"$OUT")" \
	"[[$hpid],null,\"transactionid\",\"ShareLock\",\"inventory.items\",\"Lock\"]" "locks --json: the waiter"
same "$(jq -c --argjson p "$hpid" '.backends[] | select(.pid == $p) | [.blocked_by, .job_id, .application_name, .state]' <<<"$OUT")" \
	"[[],31,\"cleanupctl:job:31:step\",\"idle in transaction\"]" "locks --json: the holder"
jq -e --argjson p "$wpid" '.backends[] | select(.pid == $p) | .wait_ms >= 0 and .xact_age_ms >= 0' <<<"$OUT" >/dev/null ||
	fail "locks --json: wait_ms / xact_age_ms"

echo "COMMIT;" >&7
exec 7>&-
wait "$HOLDER" "$wpsql"
run --json locks
expect 0
same "$(jq -r '.blocked' <<<"$OUT")" "0" "locks --json after the commit"

CURRENT="locks: unreachable database"
DB="host=$SOCK port=$PORT dbname=cleanup_lab_t_no_such_db user=postgres"
run locks
expect 1 "cannot connect"

finish
