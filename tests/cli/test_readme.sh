#!/bin/bash
# Every command the README shows runs: the ```sh blocks marked
# "<!-- readme-test" are run as written, in order, by bash -e, against a
# private default sandbox ($CLEANUP_SANDBOX_DIR), as a newcomer would after
# building. Every command of `cleanupctl --help` must appear in them, except
# the interactive console and demo, which must refuse politely off a TTY.
. "$(dirname "$0")/lib_foundation.sh"
: "${CLEANUP_SOURCE_DIR:?run through ctest}"
readme="$CLEANUP_SOURCE_DIR/README.md"
work=$(mktemp -d /tmp/cleanupctl-readme.XXXXXX)
chmod 755 "$work"
mkdir "$work/bin"
ln -s "$CLEANUPCTL" "$work/bin/cleanupctl"
export PATH="$work/bin:$PATH" CLEANUP_SANDBOX_DIR="$work/sandbox"
unset PGHOST PGPORT PGDATABASE PGUSER PGSERVICE PGHOSTADDR
cleanup() {
	"$CLEANUPCTL" sandbox stop >/dev/null 2>&1
	rm -rf "$work" "$TMPD"
}
trap cleanup EXIT

# The marked blocks, one file each.
awk -v dir="$work" '
	/<!-- readme-test/ { want = 1; next }
	want && /^```sh/ { n++; out = sprintf("%s/block%02d.sh", dir, n); inblock = 1; want = 0; next }
	inblock && /^```/ { inblock = 0; close(out); next }
	inblock { print > out }
' "$readme"
blocks=$(ls "$work"/block*.sh 2>/dev/null | wc -l)
[ "$blocks" -ge 3 ] || { echo "FAIL: found $blocks marked blocks in README.md"; exit 1; }

for b in "$work"/block*.sh; do
	CURRENT="README block $(basename "$b")"
	bash -e -o pipefail "$b" >"$TMPD/out" 2>"$TMPD/err"
	RC=$?
	OUT=$(cat "$TMPD/out")
	ERR=$(cat "$TMPD/err")
	expect 0
	if [ "$RC" -ne 0 ]; then
		echo "--- the block:"
		cat "$b"
	fi
done

CURRENT="README output"
OUT=$(cat "$work"/block*.sh)
ERR=""
RC=0
for cmd in $("$CLEANUPCTL" --help | awk '/^commands:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }'); do
	case "$cmd" in
	console | demo) ;;
	*) grep -q "cleanupctl[^|]* $cmd\b" "$work"/block*.sh || fail "no README example runs \"cleanupctl $cmd\"" ;;
	esac
done
allow=$(grep -l 'dbname=postgres" install' "$work"/block*.sh)
grep -q 'is not on the allowlist' <<<"$(bash "$allow" 2>&1)" ||
	fail "the allowlist example does not print the refusal it shows"
roles=$(grep -l 'IN ROLE cleanup_writer' "$work"/block*.sh)
grep -q 'permission denied for schema cleanup' <<<"$(bash "$roles" 2>&1)" ||
	fail "the roles example does not print the refusal it shows"

# The command table shows each command's usage exactly as its --help does
# (job's subcommands are rows of their own, compared with `job --help`).
CURRENT="README usage lines"
for cmd in $("$CLEANUPCTL" --help | awk '/^commands:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }'); do
	[ "$cmd" = job ] && continue
	usage=$("$CLEANUPCTL" "$cmd" --help 2>&1 | sed -n 's/^usage: cleanupctl //p' | head -1 | sed 's/ *$//')
	[ -n "$usage" ] || { fail "cleanupctl $cmd --help prints no usage line"; continue; }
	row="| \`$(sed 's/|/\\|/g' <<<"$usage")\` |"
	grep -qF -- "$row" "$readme" || fail "README's command table lacks the row $row (cleanupctl $cmd --help)"
done

CURRENT="console off a terminal"
"$CLEANUPCTL" console </dev/null >"$TMPD/out" 2>"$TMPD/err"
RC=$?
OUT=$(cat "$TMPD/out")
ERR=$(cat "$TMPD/err")
expect 2 "needs a terminal" "status --watch"

finish
