#!/usr/bin/env bash
# The engine library through pkg-config from a prefix of its own
# (a CI check).
#
# `cmake --install --prefix` the dev component (libcleanup.a, the headers,
# cleanup.pc) into a temporary prefix that is not the configured one, then,
# with PKG_CONFIG_PATH pointing there and nothing else (no
# --define-variable): pkg-config --cflags --libs cleanup must name that
# prefix, a tiny program compiled with exactly those flags must build, and
# run: it connects to the test sandbox through the engine, checks the
# installed schema and prints the engine's schema version and the database.
# cli_test_package covers the relocated (moved) prefix and the .deb.
source "$(dirname "$0")/lib_foundation.sh"

BLD=$CLEANUP_BINARY_DIR
CC=${CC:-cc}
P="$TMPD/opt/cleanup"
if ! cmake --install "$BLD" --prefix "$P" --component dev >"$TMPD/install.log" 2>&1; then
	echo "FAIL: cmake --install --prefix --component dev: $(cat "$TMPD/install.log")"
	exit 1
fi
pc=$(find "$P" -name cleanup.pc | head -1)
[ -n "$pc" ] || { echo "FAIL: no cleanup.pc under $P: $(find "$P" | head -20)"; exit 1; }
export PKG_CONFIG_PATH=${pc%/cleanup.pc}
unset PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR

prefix=$(pkg-config --variable=prefix cleanup 2>&1)
[ "$(cd "$prefix" 2>/dev/null && pwd -P)" = "$(cd "$P" && pwd -P)" ] ||
	{ echo "FAIL: pkg-config --variable=prefix cleanup is '$prefix', not the install prefix $P"; FAILS=$((FAILS + 1)); }
if ! cflags=$(pkg-config --cflags cleanup 2>&1) || ! libs=$(pkg-config --libs cleanup 2>&1); then
	echo "FAIL: pkg-config cleanup: $cflags $libs"
	exit 1
fi
grep -q -- '-lcleanup' <<<"$libs" && grep -q -- '-lpq' <<<"$libs" ||
	{ echo "FAIL: pkg-config --libs cleanup: $libs"; FAILS=$((FAILS + 1)); }

# The library of a sanitizer build needs the sanitizer runtime at link.
SANFLAGS=
nm "$(find "$P" -name libcleanup.a | head -1)" >"$TMPD/nm" 2>/dev/null
grep -q __asan "$TMPD/nm" && SANFLAGS="-fsanitize=address,undefined"

cat >"$TMPD/tiny.c" <<'EOF'
/* Links the installed engine: connect, check the schema, print. */
#include <stdio.h>
#include "cleanup/engine.h"
#include "cleanup/install.h"

int main(int argc, char **argv)
{
	cleanup_engine *engine = NULL;
	cleanup_error err = {0};
	int rc = 1;

	if (argc != 2)
		return 2;
	if (cleanup_engine_open(&engine, argv[1], "pkgconfig-test", &err) != CLEANUP_OK) {
		fprintf(stderr, "open: %s\n", err.message);
		goto out;
	}
	if (cleanup_schema_check(engine, &err) != CLEANUP_OK) {
		fprintf(stderr, "schema check: %s\n", err.message);
		goto out;
	}
	printf("schema %d in %s\n", cleanup_schema_version(), cleanup_engine_dbname(engine));
	rc = 0;
out:
	cleanup_engine_close(engine);
	return rc;
}
EOF
# Word splitting of the flags is what a Makefile does with them; the
# prefix's space is quoted by pkg-config, so eval keeps it in one word.
# shellcheck disable=SC2086
if ! eval "$CC -Wall -Werror -o \"\$TMPD/tiny\" \"\$TMPD/tiny.c\" $cflags $libs $SANFLAGS" 2>"$TMPD/cc.err"; then
	echo "FAIL: $CC tiny.c \$(pkg-config --cflags --libs cleanup): $(cat "$TMPD/cc.err")"
	echo "  cflags: $cflags"
	echo "  libs: $libs"
	exit 1
fi

db_fresh cleanup_lab_pkgconfig
out=$("$TMPD/tiny" "$DB" 2>&1)
RC=$?
want="schema $("$CLEANUPCTL" --json --version | jq -r .schema_version) in cleanup_lab_pkgconfig"
[ "$RC" = 0 ] && [ "$out" = "$want" ] ||
	{ echo "FAIL: the tiny program exited $RC: $out (want: $want)"; FAILS=$((FAILS + 1)); }
psql -X -q "$ADMIN" -c "DROP DATABASE IF EXISTS cleanup_lab_pkgconfig WITH (FORCE)" >/dev/null 2>&1

if [ "$FAILS" -gt 0 ]; then
	echo "$FAILS failed"
	exit 1
fi
echo "pkgconfig: installed to $P; pkg-config --cflags --libs cleanup built and ran a program against it"
