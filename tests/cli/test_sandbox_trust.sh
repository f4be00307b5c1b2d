#!/bin/bash
# The sandbox's privilege boundary: `sandbox start`, run
# as root, hands directories to the server's user. Nothing it hands over may
# be a path another user could have planted: the old predictable
# /tmp/cleanupctl-<hash> and /tmp/cleanupctl-sock-<hash> are never used
# (a symlink or a directory planted there is not followed, its target keeps
# its owner and mode), a directory that exists as a symlink, belongs to
# another user or is group/world writable is refused (exit 4) and left as
# it is, and a state file naming anything but a private directory
# cleanupctl made is refused.
. "$(dirname "$0")/lib_foundation.sh"
export LC_ALL=C
B=$CLEANUPCTL
sandbox_root sbtrust

json() { "$B" --json sandbox status --dir "$1" 2>/dev/null | jq -r ".$2"; }
# The name the old code derived from DIR: FNV-1a 64 of its bytes.
fnv_hex() {
	local s=$1 h=1469598103934665603 i c
	for ((i = 0; i < ${#s}; i++)); do
		printf -v c '%d' "'${s:i:1}"
		h=$(((h ^ (c & 255)) * 1099511628211))
	done
	printf '%016x' "$h"
}
# victim NAME: a directory (mode 755, one file) that must stay as it is.
victim() {
	mkdir -m 755 "$root/$1"
	echo keep >"$root/$1/keep"
	echo "$root/$1"
}
# intact DIR WHAT: DIR still has its owner, mode and only its file.
intact() {
	same "$(stat -c '%u:%g %a' "$1")" "$(id -u):$(id -g) 755" "$2: owner and mode of $1"
	same "$(ls -A "$1" | tr '\n' ' ')" "keep " "$2: contents of $1"
}
is_root() { [ "$(id -u)" -eq 0 ]; }
# plant_owner PATH: as root, the planted PATH belongs to another user, as
# an attacker's would.
plant_owner() { if is_root; then chown -h nobody: "$1"; fi; }

CURRENT="long --dir through a root-owned symlink: the predictable socket directory is not used"
mkdir "$root/real"
ln -s "$root/real" "$root/ln"
L="$root/ln/$(printf 'long-directory-name-%.0s' 1 2 3 4 5 6)/sb"
SANDBOXES+=("$L")
V=$(victim sockvictim)
old="/tmp/cleanupctl-sock-$(fnv_hex "$L")"
rm -rf "$old"
ln -s "$V" "$old"
plant_owner "$old"
PLANTED+=("$old")
sb start --dir "$L"
expect 0
intact "$V" "planted socket symlink"
S=$(json "$L" socket_dir)
[[ "$S" =~ ^/tmp/cleanupctl-sock-[A-Za-z0-9]{6}$ ]] || fail "socket directory $S is not a private mkdtemp name"
[ "$S" != "$old" ] || fail "the predictable socket directory was used"
same "$(stat -c '%U %a' "$S")" "$(json "$L" run_as) 700" "the private socket directory belongs to the server's user"
same "$(psql -X -t -A "$OUT" -c 'SELECT 1')" "1" "psql through the private socket directory"
same "$(grep -c "^sock=$S\$" "$root/real/$(printf 'long-directory-name-%.0s' 1 2 3 4 5 6)/sb/cleanupctl.state")" "1" \
	"the state file records the socket directory"
CI=$OUT
sb stop --dir "$L"
expect 0 "sandbox stopped"
sb start --dir "$L"
expect 0
same "$OUT" "$CI" "a second start finds the same socket directory"
sb stop --dir "$L"
expect 0

if is_root; then
	CURRENT="unreachable --dir: a directory planted at the old /tmp/cleanupctl-<hash> is not followed"
	mkdir -m 700 "$root/private"
	P="$root/private/checkout/.sandbox"
	SANDBOXES+=("$P")
	VL=$(victim logvictim)
	VS=$(victim sockvictim2)
	VD=$(victim datavictim)
	old="/tmp/cleanupctl-$(fnv_hex "$P")"
	rm -rf "$old"
	mkdir -m 777 "$old"
	ln -s "$VL" "$old/log"
	ln -s "$VS" "$old/sock"
	ln -s "$VD" "$old/data"
	chown -hR nobody: "$old"
	PLANTED+=("$old")
	sb status --dir "$P"
	expect 1 "not initialized" "data: none yet"
	sb start --dir "$P"
	expect 0 "sandbox running"
	intact "$VL" "planted log symlink"
	intact "$VS" "planted sock symlink"
	intact "$VD" "planted data symlink"
	same "$(stat -c '%U %a' "$old") $(ls -A "$old" | tr '\n' ' ')" "nobody 777 data log sock " "the planted directory is untouched"
	base=$(json "$P" base)
	[[ "$base" =~ ^/tmp/cleanupctl-[A-Za-z0-9]{6}$ ]] || fail "private base $base is not a mkdtemp name"
	same "$(json "$P" datadir)" "$base/data" "status finds the private data directory again"
	same "$(stat -c '%U %a' "$base")" "postgres 700" "the private base belongs to the server's user"
	same "$(stat -c '%U %a' "$P/cleanupctl.state")" "root 644" "the state file is root's"
	same "$(psql -X -t -A "$OUT" -c 'SELECT 1')" "1" "psql to the private sandbox"
	sb stop --dir "$P"
	expect 0 "sandbox stopped (data kept in $base/data)"
	sb status --dir "$P"
	expect 1 "sandbox stopped"

	CURRENT="a recorded private directory replaced by a symlink is refused"
	# The tmp cleaner removed it and another user planted a link there.
	mv "$base" "$base.moved"
	PLANTED+=("$base.moved")
	VB=$(victim basevictim)
	ln -s "$VB" "$base"
	chown -h nobody: "$base"
	PLANTED+=("$base")
	sb status --dir "$P"
	expect 4 "refused: $base is a symbolic link"
	sb start --dir "$P"
	expect 4 "refused: $base is a symbolic link"
	intact "$VB" "a symlink at the recorded base"
	rm "$base"
	mkdir -m 700 "$base"
	chown nobody: "$base"
	sb start --dir "$P"
	expect 4 "refused: $base is owned by nobody"
	rm -rf "$base"
	mv "$base.moved" "$base"

	CURRENT="a component of --dir that is a symlink of another user is refused"
	mkdir "$root/elsewhere"
	ln -s "$root/elsewhere" "$root/theirs"
	chown -h nobody: "$root/theirs"
	SANDBOXES+=("$root/theirs/sb")
	sb start --dir "$root/theirs/sb"
	expect 4 "$root/theirs is a symbolic link owned by nobody"
	[ ! -e "$root/elsewhere/sb" ] || fail "a refused start created $root/elsewhere/sb"

	CURRENT="sock/ in --dir owned by another user is refused"
	mkdir -p "$root/foreign/sock"
	chown nobody: "$root/foreign/sock"
	chmod 755 "$root/foreign/sock"
	SANDBOXES+=("$root/foreign")
	sb start --dir "$root/foreign"
	expect 4 "refused: $root/foreign/sock is owned by nobody"
	same "$(stat -c '%U %a' "$root/foreign/sock")" "nobody 755" "the foreign sock/ keeps its owner and mode"

	CURRENT="a state file of another user is refused"
	mkdir "$root/st-owner"
	printf 'base=/tmp/cleanupctl-AbCdEf\n' >"$root/st-owner/cleanupctl.state"
	chown nobody: "$root/st-owner/cleanupctl.state"
	sb status --dir "$root/st-owner"
	expect 4 "refused: sandbox state file $root/st-owner/cleanupctl.state" "owned by nobody"
fi

CURRENT="log/ in --dir planted as a symlink is refused and not followed"
mkdir "$root/sb-log"
V=$(victim logvictim2)
ln -s "$V" "$root/sb-log/log"
SANDBOXES+=("$root/sb-log")
sb start --dir "$root/sb-log"
expect 4 "refused: $root/sb-log/log is a symbolic link"
intact "$V" "log symlink in --dir"
[ ! -e "$root/sb-log/data" ] || fail "a refused start went on to make data/"

CURRENT="data/ in --dir that is world writable is refused"
mkdir -p "$root/sb-data/data"
chmod 777 "$root/sb-data/data"
SANDBOXES+=("$root/sb-data")
sb start --dir "$root/sb-data"
expect 4 "refused: $root/sb-data/data is group or world writable (mode 0777)"
same "$(stat -c '%a' "$root/sb-data/data")" "777" "the refused data/ keeps its mode"

CURRENT="a state file naming anything but a private directory is refused"
mkdir "$root/st-bad"
printf 'base=/etc\n' >"$root/st-bad/cleanupctl.state"
sb status --dir "$root/st-bad"
expect 4 "line 1: \"base=/etc\" is not a private directory cleanupctl makes"
SANDBOXES+=("$root/st-bad")
sb start --dir "$root/st-bad"
expect 4 "is not a private directory cleanupctl makes"
[ ! -e "$root/st-bad/data" ] || fail "a refused start made data/"

CURRENT="a state file that is a symlink is refused"
mkdir "$root/st-link"
printf 'base=/tmp/cleanupctl-AbCdEf\n' >"$root/st-target"
ln -s "$root/st-target" "$root/st-link/cleanupctl.state"
sb status --dir "$root/st-link"
expect 4 "sandbox state file $root/st-link/cleanupctl.state is a symbolic link"

CURRENT="a group-writable state file is refused"
mkdir "$root/st-mode"
printf 'base=/tmp/cleanupctl-AbCdEf\n' >"$root/st-mode/cleanupctl.state"
chmod 664 "$root/st-mode/cleanupctl.state"
sb status --dir "$root/st-mode"
expect 4 "mode 0664"

finish
