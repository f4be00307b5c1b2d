#!/bin/bash
# Comments and docs stay true (issue 23, item 5): every repository path a
# Markdown page, a C, SQL or shell comment, or a CMake file names exists
# (tests/support/stale_paths.py: placeholders such as NAME, NNN and
# <name> match any file). Then the check itself is checked: a path that
# does not exist, named in a scratch copy of a doc, is reported.
: "${CLEANUP_SOURCE_DIR:?run through ctest}"
set -uo pipefail
fails=0
out=$(python3 "$CLEANUP_SOURCE_DIR/tests/support/stale_paths.py" "$CLEANUP_SOURCE_DIR") || {
	echo "$out"
	echo "FAIL: paths named in docs or comments do not exist"
	fails=$((fails + 1))
}
echo "$out" | tail -1

# The check finds a stale path: a scratch tree with one doc naming one.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/docs" "$tmp/core/src"
touch "$tmp/core/src/engine.c"
printf 'See core/src/engine.c and core/src/gone.c, and sql/queries/NAME.sql.\n' >"$tmp/docs/x.md"
mkdir -p "$tmp/sql/queries" && touch "$tmp/sql/queries/job_get.sql"
got=$(cd "$tmp" && python3 "$CLEANUP_SOURCE_DIR/tests/support/stale_paths.py" "$tmp")
rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: a stale path gave exit $rc, not 1"; fails=$((fails + 1)); }
grep -q "docs/x.md:1: core/src/gone.c does not exist" <<<"$got" || { echo "FAIL: the stale path was not named: $got"; fails=$((fails + 1)); }
grep -q "engine.c does not exist\|NAME.sql does not exist" <<<"$got" && { echo "FAIL: an existing path or a placeholder reported: $got"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] && echo "all passed" || exit 1
