#!/usr/bin/env bash
# The installed engine library exports only its public API
# (the lab is a client like any other): every defined global symbol of the installed libcleanup.a starts
# with cleanup_ (lib_symbols.sh), while the build tree's libcleanup_core.a,
# which the tests link for the internals, still has them global (so the
# check is not vacuous). An outside program that defines names the engine
# uses inside (engine_query, col_copy, failpoint) links against the
# installed library and runs: nothing clashes. cli_test_package checks the
# library of the .deb the same way.
source "$(dirname "$0")/lib_foundation.sh"
source "$(dirname "$0")/lib_symbols.sh"

BLD=${CLEANUP_BINARY_DIR:?run through ctest}
P="$TMPD/prefix"
if ! cmake --install "$BLD" --prefix "$P" --component dev >"$TMPD/install.log" 2>&1; then
	echo "FAIL: cmake --install --component dev: $(cat "$TMPD/install.log")"
	exit 1
fi
LIB=$(find "$P" -name libcleanup.a | head -1)
[ -n "$LIB" ] || { echo "FAIL: no libcleanup.a under $P"; exit 1; }

foreign=$(foreign_symbols "$LIB")
if [ -n "$foreign" ]; then
	echo "FAIL: the installed $LIB exports $(wc -l <<<"$foreign") global(s) not prefixed cleanup_:"
	sed 's/^/  /' <<<"$foreign"
	FAILS=$((FAILS + 1))
fi
n=$(public_symbols "$LIB")
[ "$n" -ge 50 ] || { echo "FAIL: the installed library defines only $n cleanup_ symbols"; FAILS=$((FAILS + 1)); }
nm -g --defined-only "$LIB" >"$TMPD/nm" 2>&1
for sym in cleanup_engine_open cleanup_install cleanup_job_create cleanup_schema_version; do
	grep -q " T $sym\$" "$TMPD/nm" ||
		{ echo "FAIL: the installed library does not export $sym"; FAILS=$((FAILS + 1)); }
done

# The in-tree library keeps its internals global (the unit and integration
# tests use them): the same check finds them there.
INTREE=$(find "$BLD/core" -maxdepth 1 -name 'libcleanup_core.a' | head -1)
if [ -n "$INTREE" ]; then
	grep -q "^T engine_query$" <<<"$(foreign_symbols "$INTREE")" ||
		{ echo "FAIL: the check does not see engine_query in the in-tree $INTREE"; FAILS=$((FAILS + 1)); }
fi

# An outside program with its own engine_query, col_copy and failpoint
# links and runs (pkg-config's flags, as a user builds it).
export PKG_CONFIG_PATH=$(dirname "$(find "$P" -name cleanup.pc | head -1)")
SANFLAGS=
nm "$LIB" >"$TMPD/nm-all" 2>/dev/null
grep -q __asan "$TMPD/nm-all" && SANFLAGS="-fsanitize=address,undefined"
cat >"$TMPD/clash.c" <<'EOC'
#include <stdio.h>
#include "cleanup/install.h"
/* Names the engine uses inside: an outside program may have its own. */
int engine_query(void);
int engine_query(void) { return 1; }
int col_copy;
int failpoint(const char *name);
int failpoint(const char *name) { return name != NULL; }
int main(void)
{
	printf("schema %d %d\n", cleanup_schema_version(), engine_query() + col_copy + failpoint("x"));
	return 0;
}
EOC
# shellcheck disable=SC2046,SC2086
if ! cc -Wall -o "$TMPD/clash" "$TMPD/clash.c" $(pkg-config --cflags --libs cleanup) $SANFLAGS 2>"$TMPD/cc.err"; then
	echo "FAIL: a program with its own engine_query/col_copy/failpoint does not link: $(cat "$TMPD/cc.err")"
	FAILS=$((FAILS + 1))
elif ! out=$("$TMPD/clash" 2>&1) || ! grep -q "^schema [0-9]* 2$" <<<"$out"; then
	echo "FAIL: the program linked with the installed library printed: $out"
	FAILS=$((FAILS + 1))
fi

if [ "$FAILS" -gt 0 ]; then
	echo "$FAILS failed"
	exit 1
fi
echo "symbols: the installed libcleanup.a exports $n symbols, all cleanup_*; an outside program's own engine_query, col_copy and failpoint do not clash"
