#!/bin/bash
# Comments and docs stay true: every repository path a Markdown page, a C,
# SQL or shell comment, or a CMake file names exists
# (tests/support/stale_paths.py: placeholders such as NAME, NNN and
# <name> match any file), and every name they give exists too: a function
# written `name()`, `cleanup.name`, `CLEANUP_Q_NAME`, a test by its ctest
# name, a page's section by its words; and no comment cites "issue N"
# of a tracker the repository does not hold (tests/support/stale_names.py). Then the checks themselves are
# checked: stale paths and names in a scratch tree are reported.
: "${CLEANUP_SOURCE_DIR:?run through ctest}"
set -uo pipefail
fails=0
out=$(python3 "$CLEANUP_SOURCE_DIR/tests/support/stale_paths.py" "$CLEANUP_SOURCE_DIR") || {
	echo "$out"
	echo "FAIL: paths named in docs or comments do not exist"
	fails=$((fails + 1))
}
echo "$out" | tail -1
out=$(python3 "$CLEANUP_SOURCE_DIR/tests/support/stale_names.py" "$CLEANUP_SOURCE_DIR") || {
	echo "$out"
	echo "FAIL: names given in docs or comments do not exist, or a comment cites an issue number"
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

# The names check finds a stale function, SQL object, statement and test,
# and an issue number, and passes the names that exist.
mkdir -p "$tmp/tests/cli"
touch "$tmp/tests/cli/test_here.sh"
printf 'int cleanup_here(void);\nint cleanup_here(void) { return 0; }\n' >"$tmp/core/src/engine.c"
printf 'CREATE TABLE cleanup.job (id int);\nCREATE FUNCTION cleanup.job_get() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;\n' >"$tmp/sql/queries/job_get.sql"
printf '%s\n' '`cleanup_here()` reads cleanup.job through cleanup.job_get and CLEANUP_Q_JOB_GET (cli_test_here).' \
	'`cleanup_gone()` reads cleanup.no_table through CLEANUP_Q_NO_QUERY (cli_test_gone).' \
	'See x.md, "See core/src" and docs/x.md, "Gone section".' >"$tmp/docs/y.md"
printf '/* cleanup_here() calls cleanup_was_renamed() (issue 7) */\n' >"$tmp/core/src/x.c"
got=$(python3 "$CLEANUP_SOURCE_DIR/tests/support/stale_names.py" "$tmp")
rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: stale names gave exit $rc, not 1"; fails=$((fails + 1)); }
for want in "docs/y.md:2: cleanup_gone() is not defined" "docs/y.md:2: cleanup.no_table is not created" \
	"docs/y.md:2: CLEANUP_Q_NO_QUERY names no" "docs/y.md:2: the test cli_test_gone is no file" \
	'core/src/x.c:1: cites "issue 7"' "core/src/x.c:1: cleanup_was_renamed() is not defined" \
	'docs/y.md:3: docs/x.md has no section "Gone section"'; do
	grep -qF "$want" <<<"$got" || { echo "FAIL: not reported: $want; got: $got"; fails=$((fails + 1)); }
done
grep -q ':1: cleanup_here\|docs/y.md:1\|"See core/src"' <<<"$got" && { echo "FAIL: an existing name reported: $got"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] && echo "all passed" || exit 1
