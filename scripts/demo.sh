#!/bin/sh
# make demo: start the sandbox, install, seed, print status. (The console
# issue turns this into the dashboard with simulated writers.)
set -e
B="$1/tui/cleanupctl"
"$B" --quiet sandbox start >/dev/null
"$B" install
if [ "$("$B" --json status | jq '.servers | length')" -eq 0 ]; then
	"$B" seed --servers 3 --libraries 3 --items 20000
fi
"$B" status
