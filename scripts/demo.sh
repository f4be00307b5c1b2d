#!/bin/sh
# make demo: the console on demo data with simulated sync writers.
#
#   scripts/demo.sh BUILD_DIR [--scenario NAME]
#
# `cleanupctl demo` does the work (tui/cli/cmd_demo.c): it starts the sandbox,
# installs the schema, seeds demo data when there is none, makes sure there
# is a sealed, draining prune job to step, starts two `cleanupctl writer`
# processes (stopped when the console exits) and opens the console. Off a
# terminal (CI, scripts) it prints `status` and exits 0 instead.
# CLEANUP_DEMO_DB=CONNINFO uses that database instead of the sandbox.
#
# --scenario NAME (or CLEANUP_DEMO_SCENARIO=NAME) runs a narrated recovery
# scenario (docs/operator-guide.md, "Demo scenarios"): kill-runner starts a
# throttled runner of the demo job for the operator to kill from the
# console (K) and resume (r); server-crash stops the sandbox's PostgreSQL
# immediately under that runner and starts it again (not with
# CLEANUP_DEMO_DB: it stops only its own sandbox); busy-fence leaves a
# writer's transaction open on the demo library so that its seal answers
# busy; writer-storm runs the job under two fast writers.
set -eu
B="${1:-build}/tui/cleanupctl"
SCENARIO="${CLEANUP_DEMO_SCENARIO:-}"
if [ $# -ge 3 ] && [ "$2" = "--scenario" ]; then
	SCENARIO=$3
elif [ $# -ge 2 ]; then
	echo "usage: scripts/demo.sh BUILD_DIR [--scenario NAME]" >&2
	exit 2
fi
if [ -n "${CLEANUP_DEMO_DB:-}" ]; then
	CLEANUPCTL_DB="$CLEANUP_DEMO_DB" exec "$B" demo $SCENARIO
fi
exec "$B" demo $SCENARIO
