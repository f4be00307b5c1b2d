#!/bin/bash
# Runs the isolation-tester specs in tests/isolation/specs against the test
# sandbox, in a database of their own with the schema installed. As root,
# pg_isolation_regress runs as the sandbox's server user (initdb and the
# tester refuse root), from a copy of this directory that user can read.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${CLEANUPCTL:?run through ctest}" "${CLEANUP_TEST_SANDBOX:?run through ctest}"
T=/usr/lib/postgresql/15/lib/pgxs/src/test/isolation
db=cleanup_lab_t_isolation

info=$("$CLEANUPCTL" --json sandbox status --dir "$CLEANUP_TEST_SANDBOX")
sock=$(jq -r .socket_dir <<<"$info")
port=$(jq -r .port <<<"$info")
bindir=$(jq -r .bindir <<<"$info")
user=$(jq -r .run_as <<<"$info")
admin="host=$sock port=$port dbname=postgres user=postgres"

psql -X -q "$admin" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
"$CLEANUPCTL" --quiet --db "host=$sock port=$port dbname=$db user=postgres" install >/dev/null

work=$(mktemp -d /tmp/cleanupctl-iso.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r "$here/specs" "$here/expected" "$work/"
ls "$here/specs" | sed -n 's/\.spec$//p' | sort | sed 's/^/test: /' > "$work/schedule"
mkdir -p "$work/output"
if [ "$(id -u)" -eq 0 ]; then
	chown -R "$user" "$work"
	chmod 755 "$work"
	run() { su "$user" -s /bin/bash -c "$(printf '%q ' "$@")"; }
else
	run() { "$@"; }
fi
status=0
run "$T/pg_isolation_regress" --use-existing --host="$sock" --port="$port" --user=postgres \
	--dbname="$db" --bindir="$bindir" --inputdir="$work" --outputdir="$work/output" \
	--schedule="$work/schedule" || status=$?
if [ "$status" -ne 0 ]; then
	[ -f "$work/output/regression.diffs" ] && cat "$work/output/regression.diffs"
	# Keep the actual output for a human to inspect and promote to expected/.
	mkdir -p "$here/output" && cp -r "$work/output/." "$here/output/" 2>/dev/null || true
fi
exit "$status"
