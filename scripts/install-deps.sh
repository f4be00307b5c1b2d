#!/bin/sh
# Installs the Debian packages given as arguments that are not installed yet.
# As root it runs apt-get; otherwise it names what is missing and stops.
set -e
missing=""
for p in "$@"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "missing Debian packages:$missing" >&2
	echo "run 'make test' as root to install them, or: sudo apt-get install$missing" >&2
	exit 1
fi
echo "installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
