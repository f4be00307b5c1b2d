# Sourced by console tests after lib.sh: a psql session of the test's own
# that takes a lock and holds it until the test ends it, observed in
# pg_stat_activity (never slept for), ended by its application_name in the
# test's database only (tests run in parallel against one cluster).
#   hold_start NAME SQL   BEGIN, SQL, then sleep holding what SQL took;
#                         returns once the session is asleep (the lock held)
#   hold_stop             ends it (also at exit)
HOLD_NAME=
HOLD_PID=
hold_stop() {
	[ -n "$HOLD_NAME" ] || return 0
	sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = '$HOLD_NAME'" >/dev/null 2>&1
	[ -z "$HOLD_PID" ] || wait "$HOLD_PID" 2>/dev/null
	HOLD_PID=
}
trap 'hold_stop; e2e_cleanup' EXIT
hold_start() {
	HOLD_NAME=$1
	psql -X -q "$DB application_name=$1" -c "BEGIN" -c "$2" -c "SELECT pg_sleep(300)" >/dev/null 2>&1 &
	HOLD_PID=$!
	wait_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = '$1'
	           AND state = 'active' AND query LIKE '%pg_sleep%'" 1
}
