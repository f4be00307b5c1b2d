# Sourced by the bench scripts (step_statements.sh, step_profile.sh, bench_pooled.sh,
# append_floor.sh): starts the sandbox of directory $DIR with $BIN (the
# build's cleanupctl), stops it when the script exits, and sets SOCK, PORT
# and PSQL (psql as postgres on that sandbox, stopping at the first error).
"$BIN" --quiet sandbox start --dir "$DIR" >/dev/null
trap '"$BIN" --quiet sandbox stop --dir "$DIR" >/dev/null 2>&1 || true' EXIT
SOCK=$("$BIN" --json sandbox status --dir "$DIR" | jq -r .socket_dir)
PORT=$("$BIN" --json sandbox status --dir "$DIR" | jq -r .port)
PSQL="env PGOPTIONS=-cclient_min_messages=warning psql -X -q -v ON_ERROR_STOP=1 -h $SOCK -p $PORT -U postgres"
