#!/usr/bin/env bash
# F1-F3, fleets: cleanupctl behind real poolers and on a real standby.
#
# The matrix: four cells against the test sandbox's cluster,
#   direct       the sandbox's own socket
#   session      PgBouncer (Debian's) in session mode, server_reset_query
#                empty: a pooler that keeps session settings
#   transaction  PgBouncer in transaction mode
#   standby      a hot standby made with pg_basebackup -R
# each driven as a role with role-level timeouts (statement_timeout 20ms,
# lock_timeout 20ms, set by ALTER ROLE as a DBA would). In each pool cell:
# the full job flow (create, append, seal, run to completion; a removal
# through the worker) is exact, and after every cleanupctl command a second
# client of the same pool, reaching every server connection of the pool,
# sees the default settings (nothing left behind: read-only, timeouts,
# synchronous_commit, application_name, the step commit mode, advisory
# locks). On the standby the read commands work and show what the primary
# committed, the write commands exit 5 saying the server is a standby, and
# the worker waits and says so.
#
# PgBouncer and the standby run as the unprivileged postgres user, like the
# sandbox, on Unix sockets in a private directory (no TCP port), and are
# stopped at the end by their own pids.
. "$(dirname "$0")/lib_foundation.sh"

PGBOUNCER=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
[ -x "$PGBOUNCER" ] || { echo "FAIL: pgbouncer is not installed (apt-get install pgbouncer; make test installs it)"; exit 1; }
BINDIR=$(jq -r '.bindir // empty' <<<"$info")
[ -n "$BINDIR" ] || BINDIR=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)

NAME=cleanup_lab_fleet
db_fresh $NAME
DIRECT_ADMIN=$DB
"$CLEANUPCTL" --quiet --db "$DB" seed --servers 5 --libraries 2 --items 200 >/dev/null || { echo "seed failed"; exit 1; }

ROLE=fleet_slow
login_role $ROLE cleanup_runner
# FLEET_ROLE_TIMEOUTS=0 leaves them out: to see what else fails (an older
# binary fails every cell at its first command with them).
RT=${FLEET_ROLE_TIMEOUTS:-1}
if [ "$RT" = 1 ]; then
	psql -X -q "$ADMIN" -c "ALTER ROLE $ROLE IN DATABASE $NAME SET statement_timeout = '20ms'" \
		-c "ALTER ROLE $ROLE IN DATABASE $NAME SET lock_timeout = '20ms'" || { echo "ALTER ROLE failed"; exit 1; }
	RTV=20ms
else
	psql -X -q "$ADMIN" -c "ALTER ROLE $ROLE IN DATABASE $NAME RESET ALL" || { echo "ALTER ROLE failed"; exit 1; }
	RTV=0
fi

# A private directory the postgres user owns (the checkout may be one it
# cannot enter); removed at the end with everything in it.
RUN=$(mktemp -d /tmp/cleanupctl-fleet.XXXXXX)
chmod 700 "$RUN"
if [ "$(id -u)" = 0 ]; then
	chown postgres: "$RUN"
	as_pg() { runuser -u postgres -- "$@"; }
else
	as_pg() { "$@"; }
fi
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		[ -f "$p" ] && kill "$(head -1 "$p")" 2>/dev/null
	done
	[ -d "$RUN/standby" ] && as_pg "$BINDIR/pg_ctl" -D "$RUN/standby" -m immediate stop >/dev/null 2>&1
	[ -d "$RUN/standby2" ] && as_pg "$BINDIR/pg_ctl" -D "$RUN/standby2" -m immediate stop >/dev/null 2>&1
	rm -rf "$RUN" "$TMPD"
}
trap cleanup EXIT

# start_pgbouncer MODE PORT: PgBouncer in pool mode MODE on $RUN/pgb-MODE.
start_pgbouncer() {
	local mode=$1 port=$2 d=$RUN/pgb-$1
	as_pg mkdir -m 700 "$d"
	printf '"%s" ""\n"fleet_writer" ""\n"postgres" ""\n' $ROLE | as_pg tee "$d/userlist.txt" >/dev/null
	as_pg tee "$d/pgbouncer.ini" >/dev/null <<EOF
[databases]
$NAME = host=$SOCK port=$PORT dbname=$NAME
[pgbouncer]
listen_port = $port
unix_socket_dir = $d
auth_type = trust
auth_file = $d/userlist.txt
pool_mode = $mode
default_pool_size = 8
max_client_conn = 100
server_round_robin = 1
server_reset_query =
logfile = $d/pgbouncer.log
pidfile = $d/pgbouncer.pid
admin_users = postgres
EOF
	as_pg "$PGBOUNCER" -d -q "$d/pgbouncer.ini" || { echo "FAIL: pgbouncer ($mode) did not start"; cat "$d/pgbouncer.log"; exit 1; }
	PIDS+=("$d/pgbouncer.pid")
}

# stop_pgbouncer MODE: stops it (its own pid) and waits until its server
# connections have left the primary, so the next pool's are the only ones.
stop_pgbouncer() {
	local i
	kill "$(head -1 "$RUN/pgb-$1/pgbouncer.pid")"
	for i in $(seq 1 300); do
		[ "$(psql -X -q -t -A "$DIRECT_ADMIN" -c "SELECT count(*) FROM pg_stat_activity WHERE datname = '$NAME' AND usename = '$ROLE'")" = 0 ] && return
		sleep 0.1
	done
	echo "FAIL: the $1 pool's server connections did not end"
	FAILS=$((FAILS + 1))
}

# The defaults a client of the pool must see (the role's own settings,
# nothing a cleanupctl command set), and the backend it saw them on.
CHECK="SELECT pg_backend_pid() || ' ' || concat_ws('|', current_setting('default_transaction_read_only'),
  current_setting('transaction_read_only'), current_setting('statement_timeout'), current_setting('lock_timeout'),
  current_setting('idle_in_transaction_session_timeout'), current_setting('synchronous_commit'),
  current_setting('application_name'), coalesce(current_setting('cleanup.step_synchronous_commit', true), ''),
  (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()),
  (SELECT count(*) FROM pg_prepared_statements))"
WANT="off|off|$RTV|$RTV|0|on|fleet_check||0|0"

# pool_clean WHAT: every server connection of the pool (the role's backends
# in the database, seen from the primary) is reached by a second client,
# which sees the defaults. server_round_robin hands each transaction the
# longest-idle server, so a few transactions visit all of them.
pool_clean() {
	local what=$1 pids seen="" got pid vals i
	case $CELL in direct | primary | standby | failover) return ;; esac # no pool there: each session ends with its command
	pids=$(psql -X -q -t -A "$DIRECT_ADMIN" -c "SELECT pid FROM pg_stat_activity WHERE datname = '$NAME' AND usename = '$ROLE' ORDER BY pid")
	for i in $(seq 1 40); do
		got=$(psql -X -q -t -A "$POOL application_name=fleet_check" -c "$CHECK" 2>&1) || {
			# The checking client has the role's 20ms too: on a loaded
			# machine its own query may time out; that is not a finding.
			case $got in *"statement timeout"*) continue ;; esac
			echo "FAIL: [$CELL] after $what: the checking client failed: $got"
			FAILS=$((FAILS + 1))
			return
		}
		pid=${got%% *}
		vals=${got#* }
		if [ "$vals" != "$WANT" ]; then
			echo "FAIL: [$CELL] after $what: backend $pid of the pool has \"$vals\", want \"$WANT\""
			echo "      (read-only, xact read-only, statement_timeout, lock_timeout, idle timeout, synchronous_commit,"
			echo "       application_name, cleanup.step_synchronous_commit, advisory locks, prepared statements)"
			FAILS=$((FAILS + 1))
			return
		fi
		case " $seen " in *" $pid "*) ;; *) seen="$seen $pid" ;; esac
		local all=1 p
		for p in $pids; do case " $seen " in *" $p "*) ;; *) all=0 ;; esac; done
		[ $all = 1 ] && return
	done
	echo "FAIL: [$CELL] after $what: the checking client never reached every server of the pool ($(echo $pids); saw$seen)"
	psql -X -q "$POOL_ADMIN" -c "SHOW SERVERS" -c "SHOW CLIENTS"
	FAILS=$((FAILS + 1))
}

# c ARGS...: runs cleanupctl against the cell's connection as the role.
c() {
	CURRENT="[$CELL] $*"
	"$CLEANUPCTL" --db "$POOL" "$@" >"$TMPD/out" 2>"$TMPD/err" </dev/null
	RC=$?
	OUT=$(cat "$TMPD/out")
	ERR=$(cat "$TMPD/err")
}
ok() { [ "$RC" = 0 ] || fail "exit $RC, want 0"; pool_clean "$*"; }

# flow SERVER: the full flow on the cell's connection. Library 2k-1 is
# pruned (150 of its 200 IDs seen: exactly 50 deleted), library 2k is
# removed by the worker.
flow() {
	local server=$1 lp=$(($1 * 2 - 1)) lr=$(($1 * 2)) job ids
	c --json job create prune --library $lp
	ok "job create"
	job=$(jq -r .id <<<"$OUT" 2>/dev/null)
	[ -n "$job" ] && [ "$job" != null ] || { fail "no job id"; return; }
	seq 1 140 | sed "s/^/ext-$lp-/" >"$TMPD/ids"
	CURRENT="[$CELL] job append (stdin)"
	"$CLEANUPCTL" --db "$POOL" --json job append "$job" <"$TMPD/ids" >"$TMPD/out" 2>"$TMPD/err"
	RC=$?
	OUT=$(cat "$TMPD/out")
	ERR=$(cat "$TMPD/err")
	ok "job append (stdin)"
	same "$(jq -r .manifest_count <<<"$OUT" 2>/dev/null)" 140 "[$CELL] manifest after the stdin append"
	ids=$(seq 141 150 | sed "s/^/ext-$lp-/" | tr '\n' ' ')
	# shellcheck disable=SC2086
	c job append "$job" $ids
	ok "job append (arguments)"
	c job show "$job"
	ok "job show (collecting)"
	c job seal "$job" --expected 150
	ok "job seal"
	c job step "$job" --preview
	ok "job step --preview"
	c job run "$job"
	ok "job run"
	c --json job show "$job"
	ok "job show"
	same "$(jq -r '[.phase, .deleted, .manifest_count] | join(" ")' <<<"$OUT" 2>/dev/null)" "completed 50 150" \
		"[$CELL] the pruned job"
	same "$(psql -X -q -t -A "$DIRECT_ADMIN" -c "SELECT count(*) FROM inventory.items WHERE library_id = $lp")" 150 \
		"[$CELL] items left in library $lp"
	c --json job create remove-library --library $lr
	ok "job create remove-library"
	job=$(jq -r .id <<<"$OUT" 2>/dev/null)
	c worker --idle-exit --concurrency 2 --server "$server" --poll 0.2
	ok "worker"
	c --json job show "$job"
	same "$(jq -r '[.phase, .deleted] | join(" ")' <<<"$OUT" 2>/dev/null)" "completed 200" "[$CELL] the removed library"
	same "$(psql -X -q -t -A "$DIRECT_ADMIN" -c "SELECT count(*) FROM inventory.libraries WHERE id = $lr")" 0 \
		"[$CELL] library $lr removed"
	reads
}

# reads: every read command, exit 0.
reads() {
	c status
	ok "status"
	c --json status
	ok "status --json"
	c jobs
	ok "jobs"
	c locks
	ok "locks"
	c deps
	ok "deps"
	c counts --no-visit
	ok "counts --no-visit"
	if [ "$CELL" = standby ]; then
		c counts
		ok "counts (no visits on a standby)"
	fi
}

# console_shows TEXT...: console --readonly on the cell's connection, in a
# tmux of its own (a 200-column terminal), shows every TEXT in its screen
# within 30 s (observed, not slept for); then it is quit with q.
console_shows() {
	local sock=fleet-$$-$CELL t i screen="" missing
	command -v tmux >/dev/null || { echo "FAIL: tmux is not installed"; FAILS=$((FAILS + 1)); return; }
	timeout 10 tmux -L "$sock" new-session -d -x 200 -y 50 \
		"$(printf '%q ' "$CLEANUPCTL" --db "$POOL" console --readonly); sleep 1" || { echo "FAIL: tmux"; FAILS=$((FAILS + 1)); return; }
	for i in $(seq 1 300); do
		screen=$(timeout 10 tmux -L "$sock" capture-pane -p 2>/dev/null)
		missing=""
		for t in "$@"; do grep -qF -- "$t" <<<"$screen" || missing="$t"; done
		[ -z "$missing" ] && break
		sleep 0.1
	done
	if [ -n "$missing" ]; then
		echo "FAIL: [$CELL] console --readonly does not show \"$missing\"; its screen:"
		sed 's/^/    /' <<<"$screen" | head -20
		FAILS=$((FAILS + 1))
	fi
	timeout 10 tmux -L "$sock" send-keys q 2>/dev/null
	for i in $(seq 1 100); do timeout 10 tmux -L "$sock" has-session 2>/dev/null || break; sleep 0.1; done
	timeout 10 tmux -L "$sock" kill-server 2>/dev/null
	pool_clean "console --readonly"
}

# holder_through_pool: the incident path through the transaction pool. A
# sync writer login (cleanup_writer, no superuser) leaves an insert into
# library 10 open through the pool, so its server backend holds the
# library's admission row. Through the same pool, as the on-call role with
# the DBA's 20ms timeouts: the seal is busy (exit 3) naming that backend;
# the console's T on it (typed confirmation) is refused while the role
# lacks pg_signal_backend and ends it once granted; the insert rolls back,
# the seal goes through and the prune completes exactly. Waits poll the
# screen or the database.
holder_through_pool() {
	local lib=10 job wpid tm=fleet-$$-T i screen="" attempt
	login_role fleet_writer cleanup_writer
	c --json job create prune --library $lib
	ok "job create (T)"
	job=$(jq -r .id <<<"$OUT" 2>/dev/null)
	c job append "$job" ext-$lib-1
	ok "job append (T)"
	session_start "host=$RUN/pgb-transaction port=6433 dbname=$NAME user=fleet_writer application_name=fleet-writer" \
		"BEGIN; INSERT INTO inventory.items (library_id, external_id) VALUES ($lib, 'held-open');"
	for i in $(seq 1 300); do
		wpid=$(psql -X -q -t -A "$DIRECT_ADMIN" -c "SELECT pid FROM pg_stat_activity WHERE usename = 'fleet_writer'
		         AND state = 'idle in transaction' AND query LIKE '%INSERT%'")
		[ -n "$wpid" ] && break
		sleep 0.1
	done
	[ -n "$wpid" ] || { fail "[$CELL] the writer's insert did not start through the pool"; exec 7>&-; return; }
	same "$(psql -X -q -t -A "$DIRECT_ADMIN" -c "SELECT rolsuper FROM pg_roles WHERE rolname = 'fleet_writer'")" f \
		"[$CELL] the writer login is no superuser"
	CURRENT="[$CELL] job seal while a writer's insert is open through the pool"
	c job seal "$job" --expected 1 7>&-
	expect 3 "held by pid $wpid"
	command -v tmux >/dev/null || { echo "FAIL: tmux is not installed"; FAILS=$((FAILS + 1)); exec 7>&-; return; }
	timeout 10 tmux -L "$tm" new-session -d -x 200 -y 50 \
		"$(printf '%q ' "$CLEANUPCTL" --db "$POOL" console); sleep 1" 7>&- || { fail "tmux"; exec 7>&-; return; }
	T() { timeout 10 tmux -L "$tm" "$@"; }
	# seen TEXT [SECONDS]: the console's screen shows TEXT (polled).
	seen() {
		local n
		for n in $(seq 1 $((${2:-30} * 10))); do
			screen=$(T capture-pane -p 2>/dev/null)
			grep -qF -- "$1" <<<"$screen" && return 0
			sleep 0.1
		done
		return 1
	}
	# terminate: T on the writer's row (the panel lists it once idle for
	# 10 s), confirmed by typing; the footer's outcome is left in $screen.
	terminate() {
		local row
		for row in 1 2 3 4 5 6; do
			T send-keys T
			if seen "Terminate backend $wpid?" 3; then
				seen "Type \"terminate $wpid\" to confirm" 5 || fail "[$CELL] T: no typed confirmation"
				T send-keys -l -- "terminate $wpid"
				T send-keys Enter
				return 0
			fi
			T send-keys Escape j
		done
		echo "FAIL: [$CELL] T never offered backend $wpid; the screen:"
		sed 's/^/    /' <<<"$screen"
		FAILS=$((FAILS + 1))
		return 1
	}
	for i in 1 2 3 4 5 6 7; do
		screen=$(T capture-pane -p 2>/dev/null)
		grep -qE "\[locks [0-9]+/[0-9]+\]" <<<"$screen" && break
		T send-keys Tab
		sleep 0.2
	done
	seen "$wpid fleet-writer idle" 40 || {
		echo "FAIL: [$CELL] the locks panel does not list the writer's backend $wpid; the screen:"
		sed 's/^/    /' <<<"$screen"
		FAILS=$((FAILS + 1))
	}
	T send-keys g
	if terminate; then
		seen "refused:" 15 && grep -qF "pg_signal_backend" <<<"$screen" ||
			fail "[$CELL] T without pg_signal_backend is not refused naming the grant: $(grep -F refused <<<"$screen")"
		same "$(psql -X -q -t -A "$DIRECT_ADMIN" -c "SELECT count(*) FROM pg_stat_activity WHERE pid = $wpid")" 1 \
			"[$CELL] a refused T leaves the writer's backend"
	fi
	psql -X -q "$ADMIN" -c "GRANT pg_signal_backend TO $ROLE" || fail "GRANT pg_signal_backend"
	T send-keys g
	if terminate; then
		seen "done: terminated: pid $wpid" 15 ||
			fail "[$CELL] T with the grant did not end the writer's backend: $(grep -E 'done|refused' <<<"$screen")"
	fi
	T send-keys q
	for i in $(seq 1 100); do T has-session 2>/dev/null || break; sleep 0.1; done
	T kill-server 2>/dev/null
	exec 7>&-
	wait "$HOLDER" 2>/dev/null
	psql -X -q "$ADMIN" -c "REVOKE pg_signal_backend FROM $ROLE" >/dev/null
	same "$(psql -X -q -t -A "$DIRECT_ADMIN" -c "SELECT count(*) FROM cleanup.audit WHERE action = 'terminate-holder'
	         AND job_id = $job AND outcome LIKE 'done: terminated: pid $wpid%admission row of library $lib%'")" 1 \
		"[$CELL] the audit names the admission row and the job"
	CURRENT="[$CELL] job seal after T"
	c job seal "$job" --expected 1
	ok "job seal after T"
	c job run "$job"
	ok "job run after T"
	same "$(psql -X -q -t -A "$DIRECT_ADMIN" -c "SELECT string_agg(external_id, ',') FROM inventory.items WHERE library_id = $lib")" \
		"ext-$lib-1" "[$CELL] library $lib keeps the one seen item; the held insert rolled back"
}

POOL_DIRECT="host=$SOCK port=$PORT dbname=$NAME user=$ROLE"

CELL=direct
POOL=$POOL_DIRECT
flow 1

CELL=session
start_pgbouncer session 6432
POOL="host=$RUN/pgb-session port=6432 dbname=$NAME user=$ROLE"
POOL_ADMIN="host=$RUN/pgb-session port=6432 dbname=pgbouncer user=postgres"
flow 2
stop_pgbouncer session

CELL=transaction
start_pgbouncer transaction 6433
POOL="host=$RUN/pgb-transaction port=6433 dbname=$NAME user=$ROLE"
POOL_ADMIN="host=$RUN/pgb-transaction port=6433 dbname=pgbouncer user=postgres"
flow 3
console_shows "pooler: polling" "READ-ONLY" "Shows"
holder_through_pool
stop_pgbouncer transaction

# start_standby NAME HOST PORT NEWPORT: a hot standby in $RUN/NAME of the
# server at HOST:PORT, on port NEWPORT and socket directory $RUN/NAME-sock
# (log $RUN/NAME.log); exits the test if it cannot be made. fsync=off: a
# base backup's first start syncs the whole data directory (every test
# database of the cluster), which took over 60 s on a busy machine; a
# standby here is for behaviour, not durability.
start_standby() {
	local dir=$RUN/$1
	as_pg mkdir -m 700 "$dir-sock"
	if ! as_pg "$BINDIR/pg_basebackup" -h "$2" -p "$3" -U postgres -D "$dir" -R -X stream -c fast --no-sync \
		>"$TMPD/$1.bb" 2>&1; then
		echo "FAIL: pg_basebackup for $1: $(cat "$TMPD/$1.bb")"
		exit 1
	fi
	as_pg "$BINDIR/pg_ctl" -D "$dir" -w -t 300 -l "$dir.log" \
		-o "-c port=$4 -c unix_socket_directories=$dir-sock -c listen_addresses= -c hot_standby=on -c fsync=off" \
		start >/dev/null || { echo "FAIL: $1 did not start"; cat "$dir.log"; exit 1; }
}

# --- the standby --------------------------------------------------------
CELL=standby
SB=$RUN/standby
start_standby standby "$SOCK" "$PORT" 54339
POOL="host=$RUN/standby-sock port=54339 dbname=$NAME user=$ROLE"
[ "$(psql -X -q -t -A "$POOL" -c "SELECT pg_is_in_recovery()")" = t ] || fail "the standby is not in recovery"

# A job on the primary, then wait until the standby has replayed it
# (observed: its replay position passes the primary's insert position).
CELL_P=$CELL
CELL=primary
POOL=$DIRECT_ADMIN
c --json job create prune --library 7
job=$(jq -r .id <<<"$OUT" 2>/dev/null)
c job append "$job" ext-7-1 ext-7-2
c job seal "$job" --expected 2
c job run "$job"
[ "$RC" = 0 ] || fail "the primary's run"
c --json job create prune --library 9
sealed=$(jq -r .id <<<"$OUT" 2>/dev/null)
c job append "$sealed" ext-9-1
c job seal "$sealed" --expected 1
[ "$RC" = 0 ] || fail "the primary's seal"
lsn=$(psql -X -q -t -A "$DIRECT_ADMIN" -c "SELECT pg_current_wal_insert_lsn()")
CELL=$CELL_P
# A standby's transactions are read-only whatever the defaults.
WANT="off|on|$RTV|$RTV|0|on|fleet_check||0|0"
POOL="host=$RUN/standby-sock port=54339 dbname=$NAME user=$ROLE"
for i in $(seq 1 600); do
	[ "$(psql -X -q -t -A "$POOL" -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'")" = t ] && break
	sleep 0.1
done
reads
c --json job show "$job"
ok "job show"
same "$(jq -r '[.phase, .deleted] | join(" ")' <<<"$OUT" 2>/dev/null)" "completed 198" "[$CELL] the replayed job"
console_shows "standby, read-only, replay lag" "READ-ONLY"
c jobs --limit 3
ok "jobs --limit"

# Writes: exit 5, saying it is a standby.
CURRENT="[$CELL] job create"
c job create prune --library 8
expect 5 "standby"
c job append "$job" ext-8-1
expect 5 "standby"
c job seal "$job" --expected 2
expect 5 "standby"
c job run "$sealed"
expect 5 "standby"
c job step "$sealed"
expect 5 "standby"
c job cancel "$sealed"
expect 5 "standby"

# The worker waits and says so (its own process, stopped by its pid).
"$CLEANUPCTL" --db "$POOL" worker --poll 0.2 >"$TMPD/wout" 2>"$TMPD/werr" </dev/null &
wpid=$!
for i in $(seq 1 100); do
	grep -q "standby" "$TMPD/werr" && break
	kill -0 $wpid 2>/dev/null || break
	sleep 0.1
done
if kill -0 $wpid 2>/dev/null; then
	grep -q "standby" "$TMPD/werr" || { echo "FAIL: [$CELL] the worker does not say it waits for a standby: $(cat "$TMPD/werr")"; FAILS=$((FAILS + 1)); }
	kill -TERM $wpid
	wait $wpid
else
	wait $wpid
	echo "FAIL: [$CELL] the worker exited ($?) on a standby: $(cat "$TMPD/werr")"
	FAILS=$((FAILS + 1))
fi


# --- a promotion in the middle of a throttled run ---------------------
# The standby above is promoted to a primary of its
# own (P2), a standby of it is made (S2), and a throttled `job run
# --reconnect` of a prune on P2 is given both hosts with
# target_session_attrs=read-write. Its first step is held before its
# commit (the step_before_commit failpoint, whose lock a session on P2
# holds), S2 replays everything P2 committed (the runner lease among it),
# then P2 is stopped (immediate: a crash, the held step rolled back) and
# S2 promoted: the run reconnects to S2, keeps its runner lease by its
# token, and completes the job exactly (every item of the library deleted
# once, step numbers without a gap, the lease ended). Nothing is timed: a
# run between two of its steps at the crash (as this cell once was) could
# finish a 200-item library before P2 stopped on a busy machine.
CELL=failover
as_pg "$BINDIR/pg_ctl" -D "$SB" -w -t 300 promote >/dev/null || fail "promoting the standby"
P2="host=$RUN/standby-sock port=54339 dbname=$NAME user=postgres"
for i in $(seq 1 300); do
	[ "$(psql -X -q -t -A "$P2" -c "SELECT pg_is_in_recovery()" 2>/dev/null)" = f ] && break
	sleep 0.1
done
S2=$RUN/standby2
start_standby standby2 "$RUN/standby-sock" 54339 54340
S2C="host=$RUN/standby2-sock port=54340 dbname=$NAME user=postgres"
LIB=8 # server 4: its job of library 7 is done (server 5 has the sealed job of library 9)
before=$(psql -X -q -t -A "$P2" -c "SELECT count(*) FROM inventory.items WHERE library_id = $LIB")
[ "$before" -gt 0 ] || fail "[$CELL] library $LIB has no items on P2"
POOL=$P2
c --json job create prune --library $LIB
ok "job create on P2"
fj=$(jq -r .id <<<"$OUT" 2>/dev/null)
c job seal "$fj" --expected 0
ok "job seal on P2"
lsn=$(psql -X -q -t -A "$P2" -c "SELECT pg_current_wal_insert_lsn()")
for i in $(seq 1 600); do
	[ "$(psql -X -q -t -A "$S2C" -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'")" = t ] && break
	sleep 0.1
done
MULTI="host=$RUN/standby-sock,$RUN/standby2-sock port=54339,54340 dbname=$NAME user=$ROLE target_session_attrs=read-write"
KEY=$(psql -X -q -t -A "$P2" -c "SELECT cleanup.failpoint_key('step_before_commit')")
session_start "$P2" "SELECT pg_advisory_lock($KEY);"
fp_locks() { psql -X -q -t -A "$P2" -c "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted = $1 AND objid = ($KEY & 4294967295)::oid" 2>/dev/null; }
for i in $(seq 1 600); do
	[ "$(fp_locks true)" = 1 ] && break
	sleep 0.05
done
PGOPTIONS='-c cleanup.failpoints=step_before_commit' "$CLEANUPCTL" --db "$MULTI" --json job run "$fj" --max-rate 1 \
	--reconnect 100 >"$TMPD/frun" 2>"$TMPD/frun.err" </dev/null 7>&- &
frun=$!
for i in $(seq 1 1200); do
	[ "$(fp_locks false)" = 1 ] && break
	sleep 0.05
done
same "$(fp_locks false)" 1 "[$CELL] the run's first step waits at its failpoint on P2"
live=$(psql -X -q -t -A "$P2" -c "SELECT count(*) FROM cleanup.job_runners r WHERE job_id = $fj AND cleanup.runner_live(r)")
same "$live" 1 "[$CELL] the throttled run holds the lease on P2"
lsn=$(psql -X -q -t -A "$P2" -c "SELECT pg_current_wal_insert_lsn()")
for i in $(seq 1 600); do
	[ "$(psql -X -q -t -A "$S2C" -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'")" = t ] && break
	sleep 0.1
done
as_pg "$BINDIR/pg_ctl" -D "$SB" -m immediate stop >/dev/null 2>&1
exec 7>&-
wait "$HOLDER" 2>/dev/null
as_pg "$BINDIR/pg_ctl" -D "$S2" -w -t 300 promote >/dev/null || fail "[$CELL] promoting S2"
wait $frun
RC=$?
OUT=$(cat "$TMPD/frun")
ERR=$(cat "$TMPD/frun.err")
CURRENT="[$CELL] job run --max-rate 1 --reconnect 100 across the promotion"
expect 0
same "$(jq -r '[.completed, .reconnects > 0, .job.phase] | join(" ")' <<<"$OUT" 2>/dev/null)" "true true completed" \
	"[$CELL] the run reconnected and completed"
same "$(psql -X -q -t -A "$S2C" -c "SELECT count(*) FROM inventory.items WHERE library_id = $LIB")" 0 \
	"[$CELL] every item of library $LIB deleted"
same "$(psql -X -q -t -A "$S2C" -c "SELECT deleted FROM cleanup.jobs WHERE id = $fj")" "$before" \
	"[$CELL] deleted exactly once each"
same "$(psql -X -q -t -A "$S2C" -c "SELECT (max(step_no) = count(*) AND max(step_no) = (SELECT step_no FROM cleanup.jobs WHERE id = $fj))::text
                                   FROM cleanup.job_steps WHERE job_id = $fj")" true "[$CELL] step numbers without a gap"
same "$(psql -X -q -t -A "$S2C" -c "SELECT count(*) FROM cleanup.job_runners WHERE job_id = $fj")" 0 \
	"[$CELL] the run ended its lease on the new primary"
as_pg "$BINDIR/pg_ctl" -D "$S2" -m immediate stop >/dev/null 2>&1

finish
