#!/bin/sh
# make demo: the console on demo data with simulated sync writers.
#
#   scripts/demo.sh BUILD_DIR
#
# `cleanupctl demo` does the work (tui/cmd_demo.c): it starts the sandbox,
# installs the schema, seeds demo data when there is none, makes sure there
# is a sealed, draining prune job to step, starts two `cleanupctl writer`
# processes (stopped when the console exits) and opens the console. Off a
# terminal (CI, scripts) it prints `status` and exits 0 instead.
# CLEANUP_DEMO_DB=CONNINFO uses that database instead of the sandbox.
set -eu
B="${1:-build}/tui/cleanupctl"
if [ -n "${CLEANUP_DEMO_DB:-}" ]; then
	exec "$B" --db "$CLEANUP_DEMO_DB" demo
fi
exec "$B" demo
