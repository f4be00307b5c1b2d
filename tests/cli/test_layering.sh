#!/usr/bin/env bash
# The lab is a client of the engine like any other, and
# the front ends are clients of both:
# - no file of lab/ or tui/ includes a private header of the engine
#   (core/src/*_int.h) or the engine's generated sql_bundle.h, and
#   lab/CMakeLists.txt gives lab/ no include directory into core/src;
# - no file of tui/ includes libpq (the SQL and the connections are core/'s
#   and lab/'s), and none holds a SQL statement of its own;
# - the engine's SQL bundle (sql/) names nothing of the lab's schema.
: "${CLEANUP_SOURCE_DIR:?run through ctest}"
set -uo pipefail
cd "$CLEANUP_SOURCE_DIR" || exit 1
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

private=$(cd core/src && ls -- *_int.h | paste -sd'|')
hits=$(grep -rnE "#include \"($private|sql_bundle\.h)\"" lab tui)
[ -z "$hits" ] || bad "lab/ or tui/ includes a private header of the engine:"$'\n'"$hits"
grep -n 'core/src' lab/CMakeLists.txt && bad "lab/CMakeLists.txt names core/src"
hits=$(grep -rn '#include <libpq-fe.h>' tui)
[ -z "$hits" ] || bad "tui/ includes libpq:"$'\n'"$hits"
hits=$(grep -rnE '"(SELECT|INSERT|UPDATE|DELETE) [^"]*\b(FROM|INTO|SET)\b [a-z_]+\.' tui)
[ -z "$hits" ] || bad "tui/ holds SQL of its own:"$'\n'"$hits"
hits=$(grep -rn 'cleanup_lab\.' sql | grep -v '^[^:]*:[0-9]*: *--')
[ -z "$hits" ] || bad "the engine's SQL names the lab's schema: $hits"
# The check itself: a private include in a scratch file is found.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include "engine_int.h"\n' >"$tmp/x.c"
grep -qE "#include \"($private|sql_bundle\.h)\"" "$tmp/x.c" || bad "the check does not find #include \"engine_int.h\""
[ "$fails" -eq 0 ] && echo "layering: lab/ and tui/ use only the engine's public headers; tui/ has no libpq and no SQL" || exit 1
