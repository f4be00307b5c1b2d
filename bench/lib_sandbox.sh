# Sourced by the bench scripts (step_statements.sh, step_profile.sh, bench_pooled.sh,
# append_floor.sh, report_latency.sh): starts the sandbox of directory $DIR
# with $BIN (the build's cleanupctl), stops it when the script exits, and
# sets SOCK, PORT and PSQL (psql as postgres on that sandbox, stopping at
# the first error). conninfo DB and new_db DB below.
"$BIN" --quiet sandbox start --dir "$DIR" >/dev/null
trap '"$BIN" --quiet sandbox stop --dir "$DIR" >/dev/null 2>&1 || true' EXIT
SOCK=$("$BIN" --json sandbox status --dir "$DIR" | jq -r .socket_dir)
PORT=$("$BIN" --json sandbox status --dir "$DIR" | jq -r .port)
PSQL="env PGOPTIONS=-cclient_min_messages=warning psql -X -q -v ON_ERROR_STOP=1 -h $SOCK -p $PORT -U postgres"

# The conninfo of database $1 on the sandbox, as postgres.
conninfo() { echo "host=$SOCK port=$PORT dbname=$1 user=postgres"; }

# Database $1 made anew (dropped first if it is there) with the build's
# engine installed.
new_db() {
	$PSQL -d postgres -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" -c "CREATE DATABASE $1"
	"$BIN" --quiet --db "$(conninfo "$1")" install >/dev/null
}
