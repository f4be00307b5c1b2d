#!/bin/sh
# make demo: the console on demo data with simulated sync writers.
#
#   scripts/demo.sh BUILD_DIR
#
# Starts the sandbox, installs the schema, seeds demo data when there is
# none, makes sure there is a draining prune job to step (a manifest of
# three quarters of a library's external IDs, sealed), starts two
# `cleanupctl writer` processes in the background (stopped when the console
# exits), and opens the console. `cleanupctl demo` does the same from the
# binary alone.
#
# When stdin or stdout is not a terminal (CI, scripts) it prints `status`
# and exits 0 instead of opening the console. CLEANUP_DEMO_DB=CONNINFO uses
# that database instead of the sandbox (the tests do).
set -eu
BUILD=${1:-build}
B="$BUILD/tui/cleanupctl"
LOGDIR=${TMPDIR:-/tmp}

if [ -n "${CLEANUP_DEMO_DB:-}" ]; then
	set -- --db "$CLEANUP_DEMO_DB"
else
	# Always the sandbox's own database, even when PGHOST/PGDATABASE are set.
	set -- --db "$("$B" --quiet sandbox start)"
	LOGDIR=$("$B" --json sandbox status | jq -r '.logfile' | xargs dirname)
fi
"$B" "$@" install
if [ "$("$B" "$@" --json status | jq '.servers | length')" -eq 0 ]; then
	"$B" "$@" seed --servers 3 --libraries 3 --items 20000
fi

# A draining job to step: the unfinished one, else a new prune job on an
# open library of a server without a job, that no job has visited yet.
job=$("$B" "$@" --json jobs --limit 1000 |
	jq -r '[.[] | select(.phase == "draining" or .phase == "finalizing")][0].id // empty')
if [ -z "$job" ]; then
	used=$("$B" "$@" --json jobs --limit 1000 | jq -c '[.[].library_id]')
	pick=$("$B" "$@" --json status | jq -r --argjson used "$used" '
		[.servers[] | select(.job_id == null) | .libraries[]
		 | select(.admission == "open" and .item_count >= 8)
		 | select(.id as $i | $used | index($i) | not)][0]
		| if . == null then empty else "\(.id) \(.item_count)" end')
	if [ -n "$pick" ]; then
		lib=${pick% *}
		items=${pick#* }
		keep=$((items * 3 / 4))
		[ "$keep" -gt 20000 ] && keep=20000
		job=$("$B" "$@" --json job create prune --library "$lib" | jq -r .id)
		seq 1 "$keep" | sed "s/^/ext-$lib-/" | "$B" "$@" --quiet job append "$job" >/dev/null
		count=$("$B" "$@" --json job show "$job" | jq -r .manifest_count)
		"$B" "$@" job seal "$job" --expected "$count"
	else
		echo "demo: every library has had its demo job; stop and delete the sandbox for a fresh demo" >&2
	fi
fi

if [ ! -t 0 ] || [ ! -t 1 ]; then
	echo "demo: not on a terminal: printing status instead of opening the console" >&2
	"$B" "$@" status
	exit 0
fi

# Two writers: on the demo job's server (its fenced library rejects them)
# and on another one; they stop when the console exits.
first=""
[ -n "$job" ] && first=$("$B" "$@" --json job show "$job" | jq -r .server_id)
servers=$( (
	[ -n "$first" ] && echo "$first"
	"$B" "$@" --json status | jq -r '.servers[].id'
) | awk '!seen[$0]++' | head -2)
pids=""
for s in $servers; do
	"$B" "$@" writer --rate 4 --server "$s" >"$LOGDIR/writer-$s.log" 2>&1 </dev/null &
	pids="$pids $!"
	echo "demo: writer on server $s (log $LOGDIR/writer-$s.log)" >&2
done
trap 'kill $pids 2>/dev/null; wait 2>/dev/null' EXIT INT TERM
"$B" "$@" console
