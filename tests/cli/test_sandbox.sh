#!/bin/bash
# cleanupctl sandbox start|stop|status on private sandboxes (never the test
# run's own): the conninfo works with --db and psql, Unix socket only, the
# server runs unprivileged, start and stop are idempotent, a kill -9 of the
# server leaves a stale postmaster.pid that the next start handles, the
# 107-byte socket path limit (long --dir), a directory the server's user
# cannot enter (data falls back to a private /tmp/cleanupctl-XXXXXX made by
# mkdtemp and recorded in DIR's state file), missing binaries, and the
# server stopped in the middle of a command. test_sandbox_trust.sh covers
# planted paths, test_sandbox_quote.sh quoting and bad directories.
. "$(dirname "$0")/lib_foundation.sh"
B=$CLEANUPCTL
sandbox_root sbtest

pid_of() { "$B" --json sandbox status --dir "$1" | jq -r .pid; }

# wait_blocked CONNINFO APP: polls until a backend named APP waits on a lock
# (observing the wait, not sleeping for it); at most 20 s.
wait_blocked() {
	local i
	for i in $(seq 1 400); do
		[ "$(psql -X -t -A "$1" -c "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = '$2'
			AND cardinality(pg_blocking_pids(pid)) > 0")" = 1 ] && return 0
		sleep 0.05
	done
	echo "FAIL: $2 never waited on a lock"
	FAILS=$((FAILS + 1))
	return 1
}

# hold_job_row CONNINFO JOB: a psql session fed through a fifo holds the
# job row FOR UPDATE until `release_job_row`; returns once it holds it.
hold_job_row() {
	local i
	session_start "$1 application_name=row-holder" "BEGIN; SELECT 1 FROM cleanup.jobs WHERE id = $2 FOR UPDATE;"
	for i in $(seq 1 400); do
		[ "$(psql -X -t -A "$1" -c "SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = 'row-holder' AND state = 'idle in transaction'")" = 1 ] && return 0
		sleep 0.05
	done
	echo "FAIL: the row holder never took its lock"
	FAILS=$((FAILS + 1))
}
release_job_row() {
	exec 7>&-
	wait "$HOLDER" 2>/dev/null
}

D="$root/sb"
SANDBOXES+=("$D")

CURRENT="sandbox start"
sb start --dir "$D"
expect 0 "sandbox running"
CI=$OUT
same "$(wc -l <<<"$CI")" "1" "start prints one conninfo line on stdout"
same "$(psql -X -t -A "$CI" -c 'SELECT current_database()')" "cleanup_lab" "psql with the printed conninfo"
same "$(psql -X -t -A "$CI" -c 'SHOW listen_addresses')" "" "no TCP listener"
DB=$CI
run install
expect 0 "installed schema version"
pid1=$(pid_of "$D")
if [ "$(id -u)" -eq 0 ]; then
	same "$(ps -o user= -p "$pid1" | tr -d ' ')" "$(jq -r .run_as <<<"$("$B" --json sandbox status --dir "$D")")" \
		"server runs as the unprivileged user"
	[ "$(ps -o user= -p "$pid1" | tr -d ' ')" != root ] || fail "server runs as root"
fi

CURRENT="sandbox start is idempotent"
sb start --dir "$D"
expect 0
same "$OUT" "$CI" "second start prints the same conninfo"
same "$(pid_of "$D")" "$pid1" "second start keeps the server"
sb status --dir "$D"
expect 0 "sandbox running (pid $pid1"
same "$("$B" --json sandbox status --dir "$D" | jq -c '[.running, .initialized]')" "[true,true]" "status --json"

CURRENT="server stopped (fast) while job append waits on the job row"
run seed --servers 1 --libraries 1 --items 5
expect 0
run --json job create prune --library 1
J=$(jq -r .id <<<"$OUT")
before=$(fingerprint)
hold_job_row "$CI" "$J"
"$B" --db "$CI" job append "$J" a b c >"$root/append.out" 2>&1 &
APPEND=$!
if wait_blocked "$CI" "cleanupctl:job:$J:append"; then
	sb stop --dir "$D"
	expect 0 "sandbox stopped"
	collect "$APPEND" "$root/append.out" /dev/null
	expect 1 "lost the connection to the database while appending to job $J"
fi
release_job_row
sb start --dir "$D"
expect 0
unchanged "$before"

CURRENT="server killed (kill -9) while job append waits; stale postmaster.pid"
hold_job_row "$CI" "$J"
"$B" --db "$CI" job append "$J" a b c >"$root/append.out" 2>&1 &
APPEND=$!
if wait_blocked "$CI" "cleanupctl:job:$J:append"; then
	pid=$(pid_of "$D")
	kill -9 "$pid"
	collect "$APPEND" "$root/append.out" /dev/null
	expect 1 "lost the connection to the database while appending to job $J"
	[ -f "$(jq -r .datadir <<<"$("$B" --json sandbox status --dir "$D")")/postmaster.pid" ] ||
		fail "kill -9 should leave postmaster.pid behind"
	sb status --dir "$D"
	expect 1 "sandbox stopped"
fi
release_job_row
sb start --dir "$D"
expect 0 "sandbox running"
[ "$(pid_of "$D")" != "$pid1" ] || fail "a new server after kill -9"
unchanged "$before"
run job append "$J" a b c
expect 0 "3 new"

CURRENT="sandbox stop is idempotent"
sb stop --dir "$D"
expect 0 "sandbox stopped"
sb stop --dir "$D"
expect 0 "sandbox stopped"
sb status --dir "$D"
expect 1 "sandbox stopped"
same "$("$B" --json sandbox status --dir "$D" | jq -c '[.running, .initialized]')" "[false,true]" "status after stop"

CURRENT="long --dir: the socket moves to a private directory under /tmp (107-byte limit)"
L="$root/$(printf 'long-directory-name-%.0s' 1 2 3 4 5 6)/sb"
SANDBOXES+=("$L")
sb start --dir "$L"
expect 0
[[ "$OUT" =~ ^host=\'/tmp/cleanupctl-sock-[A-Za-z0-9]{6}\'\  ]] ||
	fail "socket directory of a long --dir is not a private directory under /tmp"
same "$(psql -X -t -A "$OUT" -c 'SELECT 1')" "1" "psql through the /tmp socket"
same "$(jq -r .datadir <<<"$("$B" --json sandbox status --dir "$L")")" "$L/data" "data stays in the long --dir"
sb stop --dir "$L"
expect 0

CURRENT="--dir too long for PostgreSQL"
sb status --dir "/$(printf 'x%.0s' $(seq 1 950))"
expect 2 "sandbox directory is 951 bytes long; the limit is 900 bytes"

if [ "$(id -u)" -eq 0 ]; then
	CURRENT="a --dir the server's user cannot enter: data in a private /tmp/cleanupctl-XXXXXX"
	mkdir -m 700 "$root/private"
	P="$root/private/checkout/.sandbox"
	SANDBOXES+=("$P")
	sb start --dir "$P"
	expect 0
	info=$("$B" --json sandbox status --dir "$P")
	[[ "$(jq -r .datadir <<<"$info")" =~ ^/tmp/cleanupctl-[A-Za-z0-9]{6}/data$ ]] ||
		fail "datadir of an unreachable --dir: $(jq -r .datadir <<<"$info")"
	same "$(jq -r .dir <<<"$info")" "$P" "the chosen dir is still reported"
	same "$(psql -X -t -A "$OUT" -c 'SELECT 1')" "1" "psql to the fallback sandbox"
	sb stop --dir "$P"
	expect 0
fi

CURRENT="missing PostgreSQL binaries"
PG_BINDIR=/nonexistent/bin "$B" sandbox start --dir "$root/nobin" >"$TMPD/out" 2>"$TMPD/err"
RC=$?
OUT=$(cat "$TMPD/out")
ERR=$(cat "$TMPD/err")
expect 1 "PG_BINDIR=/nonexistent/bin does not hold the PostgreSQL server binaries"
[ ! -e "$root/nobin" ] || fail "a failed start created $root/nobin"
# No PG_BINDIR, pg_config pointing at nothing, /usr/lib/postgresql empty:
# only a private mount namespace can arrange that deterministically.
mkdir "$root/empty"
if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
	unshare -m sh -c 'mount --bind "$1" /usr/lib/postgresql && shift && exec env -u PG_BINDIR "$@"' sh \
		"$root/empty" "$B" sandbox start --dir "$root/nobin" >"$TMPD/out" 2>"$TMPD/err"
	RC=$?
	OUT=$(cat "$TMPD/out")
	ERR=$(cat "$TMPD/err")
	expect 1 "no PostgreSQL server binaries found" "apt-get install postgresql-15"
else
	echo "note: not root or no mount namespaces; the no-binaries case was checked through PG_BINDIR only"
fi

CURRENT="usage"
sb
expect 2 "sandbox needs start, stop or status"
sb start --dir
expect 2 "--dir needs a directory"
sb restart --dir "$D"
expect 2 '"restart"'
sb start stop
expect 2 'unexpected argument "stop"'

finish
