#!/bin/bash
# CLEANUPCTL_DB (docs/security.md, "Passwords in --db"): the conninfo when
# --db is not given, so that a password need not stand on a command line,
# which ps shows to every local user.
#  - without --db, CLEANUPCTL_DB names the database, before libpq's
#    environment (PGDATABASE) and the sandbox; without it that order holds;
#  - --db wins over it, for reading and for writing; it is not a second
#    --db; an empty CLEANUPCTL_DB counts as unset;
#  - a CLEANUPCTL_DB that does not connect gives the usual connection error
#    (exit 1, "cannot connect to the database (CONNINFO)"), the password
#    shown as *** on stderr and in --json, never as written, for every
#    form (key=value, URI, a string libpq rejects) and command;
#  - the demo honours it (off a terminal), and demo server-crash, which
#    stops the server it runs on, refuses it as it refuses --db;
#  - --help and cleanupctl(1)'s ENVIRONMENT section document it.
. "$(dirname "$0")/lib_foundation.sh"
unset CLEANUPCTL_DB

SECRET='s3cret-env-41d9'
db_fresh cleanup_lab_t_cli_db_env_b
DBB=$DB
db_fresh cleanup_lab_t_cli_db_env_a
DBA=$DB
"$CLEANUPCTL" --quiet --db "$DBA" seed --servers 1 --libraries 1 --items 40 >/dev/null || fail "seed A"
PGENV=(PGHOST="$SOCK" PGPORT="$PORT" PGUSER=postgres PGDATABASE=cleanup_lab_t_cli_db_env_b)

# run_env VAR=VALUE... -- ARGS...: runs the binary with ARGS in the
# environment plus VAR=VALUE...; sets RC, OUT, ERR.
run_env() {
	local vars=()
	while [ "$1" != -- ]; do
		vars+=("$1")
		shift
	done
	shift
	env "${vars[@]}" "$CLEANUPCTL" "$@" >"$TMPD/out" 2>"$TMPD/err" </dev/null
	RC=$?
	OUT=$(cat "$TMPD/out")
	ERR=$(cat "$TMPD/err")
}
# no_secret: the last run printed the password nowhere.
no_secret() {
	case "$OUT$ERR" in
	*"$SECRET"* | *s3cret-env*) fail "$CURRENT: the password is printed" ;;
	esac
}
servers_in() { psql -X -q -t -A "$1" -c "SELECT count(*) FROM inventory.media_servers"; }

CURRENT="CLEANUPCTL_DB without --db"
run_env CLEANUPCTL_DB="$DBA" -- status
expect 0 "database cleanup_lab_t_cli_db_env_a"
run_env CLEANUPCTL_DB="$DBA password=$SECRET" -- --json status
expect 0
same "$(jq '.servers | length' <<<"$OUT")" 1 "--json status through CLEANUPCTL_DB with a password (trust: ignored)"
no_secret

CURRENT="CLEANUPCTL_DB before libpq's environment"
run_env CLEANUPCTL_DB="$DBA" "${PGENV[@]}" -- status
expect 0 "database cleanup_lab_t_cli_db_env_a"
CURRENT="without CLEANUPCTL_DB, libpq's environment as before"
run_env "${PGENV[@]}" -- status
expect 0 "database cleanup_lab_t_cli_db_env_b"
CURRENT="an empty CLEANUPCTL_DB counts as unset"
run_env CLEANUPCTL_DB= "${PGENV[@]}" -- status
expect 0 "database cleanup_lab_t_cli_db_env_b"

CURRENT="--db wins over CLEANUPCTL_DB"
run_env CLEANUPCTL_DB="$DBA" -- --db "$DBB" status
expect 0 "database cleanup_lab_t_cli_db_env_b"
case "$OUT$ERR" in *"given twice"*) fail "CLEANUPCTL_DB counted as a second --db" ;; esac
CURRENT="--db wins over CLEANUPCTL_DB for a write"
run_env CLEANUPCTL_DB="$DBA" -- --quiet --db "$DBB" seed --servers 1 --libraries 1 --items 5
expect 0
same "$(servers_in "$DBA")/$(servers_in "$DBB")" "1/1" "the seed went to --db's database only (servers in A/B)"
CURRENT="--db given twice stays an error beside CLEANUPCTL_DB"
run_env CLEANUPCTL_DB="$DBA" -- --db "$DBB" --db "$DBB password=$SECRET" status
expect 2 "--db given twice" "password=***"
no_secret

# A CLEANUPCTL_DB that does not connect: the usual error, redacted.
# bad_env WHAT CONNINFO FRAGMENT ARGS...: exit 1, the usual message with
# FRAGMENT (the redacted conninfo), no password on stderr or stdout, and
# with --json one error document whose message has FRAGMENT.
bad_env() {
	local what=$1 db=$2 frag=$3
	shift 3
	CURRENT="bad CLEANUPCTL_DB: $what: $*"
	run_env CLEANUPCTL_DB="$db" -- "$@"
	expect 1 "cannot connect to the database (" "$frag" "the conninfo came from CLEANUPCTL_DB (no --db given)"
	no_secret
	CURRENT="bad CLEANUPCTL_DB: $what: --json $*"
	run_env CLEANUPCTL_DB="$db" -- --json "$@"
	no_secret
	jq -e --arg f "$frag" '.error.exit_code == 1 and (.error.message | startswith("cannot connect to the database (")) and (.error.message | contains($f)) and (.error.hint | contains("the conninfo came from CLEANUPCTL_DB"))' <<<"$OUT" >/dev/null ||
		fail "$CURRENT: not the usual redacted error document"
}
BAD="host=$SOCK port=$PORT dbname=cleanup_no_such_db user=postgres password=$SECRET"
for args in "status" "jobs" "job show 1" "locks" "writer --ops 1" "worker --idle-exit" "install"; do
	# shellcheck disable=SC2086
	bad_env "key=value" "$BAD" "dbname=cleanup_no_such_db user=postgres password=***)" $args
done
bad_env "URI user:password@" "postgresql://postgres:$SECRET@/cleanup_no_such_db?host=$SOCK&port=$PORT" \
	"postgresql://postgres:***@/" status
bad_env "URI ?password=" "postgresql:///cleanup_no_such_db?host=$SOCK&port=$PORT&password=$SECRET" \
	"&password=***" status
CURRENT="a bad --db beside CLEANUPCTL_DB: --db's error, no word of CLEANUPCTL_DB"
run_env CLEANUPCTL_DB="$DBA" -- --db "$BAD" status
expect 1 "cannot connect to the database (" "password=***"
no_secret
case "$ERR" in *CLEANUPCTL_DB*) fail "$CURRENT: the error names CLEANUPCTL_DB" ;; esac
bad_env "a string libpq rejects" "host=$SOCK password $SECRET" "password ***" status

# The demo: off a terminal it runs on CLEANUPCTL_DB's database (status of
# it), and server-crash refuses it (it stops only its own sandbox's server).
CURRENT="demo on CLEANUPCTL_DB, off a terminal"
run_env CLEANUPCTL_DB="$DBA password=$SECRET" -- demo
expect 0 "database cleanup_lab_t_cli_db_env_a" "printing status"
no_secret
same "$(psql -X -q -t -A "$DBA" -c "SELECT count(*) FROM cleanup.jobs WHERE phase = 'draining'")" 1 \
	"the demo made its job in CLEANUPCTL_DB's database"
CURRENT="demo server-crash refuses CLEANUPCTL_DB"
run_env CLEANUPCTL_DB="$DBB" -- demo server-crash
expect 2 "it runs only on the demo's own sandbox (without --db and without CLEANUPCTL_DB)"
same "$(psql -X -q -t -A "$DBB" -c "SELECT count(*) FROM cleanup.jobs")" 0 "server-crash refused: nothing made"

CURRENT="documented"
run --help
expect 0 "else \$CLEANUPCTL_DB, else PGHOST" "Passwords: ~/.pgpass or \$CLEANUPCTL_DB"
awk '/^\.SH / { on = ($0 == ".SH ENVIRONMENT") } on' "$CLEANUP_BINARY_DIR/doc/cleanupctl.1" >"$TMPD/env"
grep -qx '.B CLEANUPCTL_DB' "$TMPD/env" || fail "cleanupctl(1) ENVIRONMENT does not list CLEANUPCTL_DB"
grep -q 'wins over it' "$TMPD/env" || fail "cleanupctl(1) ENVIRONMENT does not say that --db wins over CLEANUPCTL_DB"

finish
