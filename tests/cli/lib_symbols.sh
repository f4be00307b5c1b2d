# The exported-symbol rule of the installed engine library (sourced by
# test_symbols.sh and test_package.sh): every defined global symbol of
# libcleanup.a starts with cleanup_; the internals (engine_query,
# col_copy, failpoint, the embedded sql_*_files, ...) are local
# (core/CMakeLists.txt: ld -r, then objcopy --keep-global-symbol).

# foreign_symbols LIB: the defined global symbols of LIB that do not start
# with cleanup_, "TYPE NAME" one a line; nothing when the rule holds. Exit
# status 2 when nm cannot read LIB.
foreign_symbols() {
	local out
	out=$(nm -g --defined-only "$1" 2>&1) || { echo "nm $1: $out"; return 2; }
	awk 'NF == 3 && $3 !~ /^cleanup_/ { print $2, $3 }' <<<"$out" | sort -u
}

# public_symbols LIB: how many defined global cleanup_ symbols LIB has.
public_symbols() {
	nm -g --defined-only "$1" 2>/dev/null | awk 'NF == 3 && $3 ~ /^cleanup_/' | wc -l
}
