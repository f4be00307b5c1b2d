#!/bin/bash
# A password written in --db never reaches the output (docs/security.md):
# connections that fail (a database that does not exist, a host that does
# not resolve, strings libpq rejects) with the password in a key=value
# conninfo, in a URI's user:password@, in a URI's ?password= and in
# sslpassword= print neither it on stderr nor on stdout nor in --json; the
# message still shows the rest of the conninfo, with the password as ***.
# Every command that connects goes through the same path; each is tried.
. "$(dirname "$0")/lib_foundation.sh"

SECRET='s3cr3tPW-7f2c'
HOSTPART="host=$SOCK port=$PORT"

# leaks WHAT: fails when the last run's stdout or stderr holds the secret,
# or its --json stdout is not one JSON document.
leaks() {
	case "$OUT$ERR" in
	*"$SECRET"* | *s3cr3t*) fail "$1: the password is printed" ;;
	esac
}

# try WHAT CONNINFO [FRAGMENT]: runs status with CONNINFO, as text and as
# --json; exit 1 (connection failed), no secret anywhere, the message
# names FRAGMENT (the redacted conninfo) when given.
try() {
	local what=$1 db=$2 frag=${3:-}
	CURRENT="$what"
	"$CLEANUPCTL" --db "$db" status >"$TMPD/out" 2>"$TMPD/err" </dev/null
	RC=$?
	OUT=$(cat "$TMPD/out")
	ERR=$(cat "$TMPD/err")
	[ "$RC" -ne 0 ] || fail "$what: connected"
	leaks "$what"
	[ -z "$frag" ] || expect "$RC" "$frag"
	CURRENT="$what --json"
	"$CLEANUPCTL" --json --db "$db" status >"$TMPD/out" 2>"$TMPD/err" </dev/null
	RC=$?
	OUT=$(cat "$TMPD/out")
	ERR=$(cat "$TMPD/err")
	leaks "$what --json"
	jq -e .error <<<"$OUT" >/dev/null || fail "$what --json: no JSON error document"
	[ -z "$frag" ] || jq -e --arg f "$frag" '.error.message | contains($f)' <<<"$OUT" >/dev/null ||
		fail "$what --json: the message lacks \"$frag\""
}

try "key=value, database missing" "$HOSTPART dbname=cleanup_no_such_db user=postgres password=$SECRET" \
	"dbname=cleanup_no_such_db user=postgres password=***)"
try "key=value, quoted password with a space" "$HOSTPART dbname=cleanup_no_such_db password='$SECRET x'" \
	"password=***"
try "key=value, host does not resolve" \
	"host=cleanup-no-such-host.invalid port=5432 dbname=x user=u password=$SECRET connect_timeout=3" \
	"password=***"
try "sslpassword" "$HOSTPART dbname=cleanup_no_such_db sslpassword=$SECRET" "sslpassword=***"
try "URI user:password@, database missing" \
	"postgresql://postgres:$SECRET@/cleanup_no_such_db?host=$SOCK&port=$PORT" "postgresql://postgres:***@/"
try "URI user:password@, host does not resolve" \
	"postgres://u:$SECRET@cleanup-no-such-host.invalid:5432/db?connect_timeout=3" "postgres://u:***@"
try "URI ?password=" "postgresql:///cleanup_no_such_db?host=$SOCK&port=$PORT&password=$SECRET" "&password=***"
try "URI with a percent-encoded password" \
	"postgresql://postgres:$(sed 's/-/%2D/g' <<<"$SECRET")@/cleanup_no_such_db?host=$SOCK&port=$PORT" ":***@"
# libpq rejects these; its message may quote the bad part.
try "key=value libpq rejects (a key without =)" "$HOSTPART password $SECRET"
try "URI libpq rejects (a bad percent escape)" "postgresql://u:${SECRET}%zz@localhost/db"
try "URI libpq rejects (a bad port)" "postgresql://u:$SECRET@localhost:notaport/db"

CURRENT="--db given twice"
"$CLEANUPCTL" --db "password=$SECRET" --db "postgresql://u:$SECRET@h/db" status >"$TMPD/out" 2>"$TMPD/err" </dev/null
RC=$?
OUT=$(cat "$TMPD/out")
ERR=$(cat "$TMPD/err")
expect 2 "--db given twice" "password=***" "postgresql://u:***@h/db"
leaks "$CURRENT"

# Every command that connects, with a database that does not exist.
BAD="$HOSTPART dbname=cleanup_no_such_db user=postgres password=$SECRET"
for args in "install" "seed --servers 1" "status" "jobs" "job show 1" "job create prune --library 1" \
	"job step 1" "job run 1" "locks" "deps" "counts" "writer --ops 1" "worker --idle-exit"; do
	CURRENT="$args"
	# shellcheck disable=SC2086
	"$CLEANUPCTL" --json --db "$BAD" $args >"$TMPD/out" 2>"$TMPD/err" </dev/null
	RC=$?
	OUT=$(cat "$TMPD/out")
	ERR=$(cat "$TMPD/err")
	[ "$RC" -ne 0 ] || fail "$args: succeeded against a missing database"
	leaks "$args"
done

# The read-only console rebuilds the conninfo (cleanup_conninfo_readonly):
# a string libpq rejects is reported without its password. It needs a
# terminal: script(1) gives it one.
if command -v script >/dev/null 2>&1; then
	CURRENT="console --readonly, a conninfo libpq rejects"
	script -qec "$(printf '%q ' "$CLEANUPCTL" --db "$HOSTPART password $SECRET" console --readonly)" /dev/null \
		>"$TMPD/out" 2>"$TMPD/err" </dev/null
	RC=$?
	OUT=$(cat "$TMPD/out")
	ERR=$(cat "$TMPD/err")
	[ "$RC" -ne 0 ] || fail "$CURRENT: started"
	leaks "$CURRENT"
	expect "$RC" "cannot be parsed"
fi

finish
