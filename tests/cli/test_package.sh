#!/usr/bin/env bash
# cleanupctl installs and runs away from its source tree.
#
# 1. `cmake --install` into a temporary prefix lays out the program, the
#    engine library with its headers, pkg-config and CMake package files,
#    themes, man pages, completions and docs; the installed program holds no
#    path into the source tree.
# 2. The prefix is moved (relocated) and the source tree hidden (a private
#    mount namespace with an empty tmpfs over it, when unshare is allowed):
#    `console --theme light` then loads the light theme from the installed
#    data directory (its colours differ from the default's, and a theme
#    that does not exist is reported), the default sandbox is under
#    $XDG_STATE_HOME, and an outside program links the engine through
#    `pkg-config --libs cleanup`.
# 3. `cpack -G DEB` (what `make package` runs) builds cleanupctl_*.deb
#    whose Depends name libpq, ncurses and (with readline) readline, and
#    libcleanup-dev_*.deb with the library (exporting only cleanup_*
#    symbols, lib_symbols.sh); `dpkg -x` into a
#    temporary root (no root install): `cleanupctl --version` runs there,
#    its man page renders, its bash completion loads and completes.
: "${CLEANUPCTL:?run through ctest}" "${CLEANUP_SOURCE_DIR:?}" "${CLEANUP_BINARY_DIR:?}"
source "$(dirname "$0")/lib_foundation.sh"
source "$(dirname "$0")/lib_symbols.sh"

SRC=$CLEANUP_SOURCE_DIR
BLD=$CLEANUP_BINARY_DIR
VERSION=$(sed -n 's/^#define CLEANUP_VERSION "\(.*\)"/\1/p' "$BLD/config.h")
TSOCK="cleanupctl-pkg-$$"
T() { timeout 10 tmux -L "$TSOCK" "$@"; }
trap 'T kill-server 2>/dev/null; rm -rf "$TMPD"' EXIT
bad() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

# --- 1. cmake --install ----------------------------------------------------
if ! cmake --install "$BLD" --prefix "$TMPD/prefix" --strip >"$TMPD/install.log" 2>&1; then
	cat "$TMPD/install.log"
	bad "cmake --install failed"
	exit 1
fi
P=$TMPD/prefix
LIBDIR=$(cd "$P" && ls -d lib*/pkgconfig | head -1)
LIBDIR=${LIBDIR%/pkgconfig}
for f in bin/cleanupctl "$LIBDIR/libcleanup.a" include/cleanup/job.h include/cleanup/engine.h \
	"$LIBDIR/pkgconfig/cleanup.pc" "$LIBDIR/cmake/cleanup/cleanupConfig.cmake" \
	"$LIBDIR/cmake/cleanup/cleanupTargets.cmake" share/cleanupctl/themes/light.theme \
	share/cleanupctl/themes/dark.theme share/man/man1/cleanupctl.1.gz share/man/man1/cleanupctl-console.1.gz \
	share/bash-completion/completions/cleanupctl share/zsh/vendor-completions/_cleanupctl \
	share/doc/cleanupctl/README.md share/doc/cleanupctl/LICENSE share/doc/cleanupctl/CHANGELOG.md \
	share/doc/cleanupctl/docs/json.md; do
	[ -e "$P/$f" ] || bad "cmake --install did not install $f"
done
[ -e "$P/bin/cleanupctl-norl" ] && bad "the test-only cleanupctl-norl was installed"
# No path into the checkout: the themes and the sandbox are found at run time.
for s in "$SRC/themes" "$SRC/.sandbox" "$BLD/cleanupctl-checkout"; do
	grep -qaF "$s" "$P/bin/cleanupctl" && bad "the installed program holds the checkout path $s"
done

# Relocated: the program finds its data relative to itself.
mv "$P" "$TMPD/moved"
P=$TMPD/moved
X="$P/bin/cleanupctl"
# run_hidden CMD...: CMD in a private mount namespace where the source tree
# (and with it a build tree inside it) is an empty tmpfs and the build
# tree's checkout file is gone; the sandbox's socket directory is bound to
# $TMPD/sock first, so $HDB reaches the test database. Without unshare
# (not root), CMD as it is, with $HDB the usual conninfo.
mkdir -p "$TMPD/sock"
run_hidden() {
	if [ "$HIDE" = 1 ]; then
		unshare -m sh -c 'mount --bind "$0" "$1" && mount -t tmpfs none "$2" &&
			{ [ ! -e "$3" ] || mount --bind /dev/null "$3"; } && shift 3 && exec "$@"' \
			"$SOCK" "$TMPD/sock" "$SRC" "$BLD/cleanupctl-checkout" "$@"
	else
		"$@"
	fi
}
HIDE=0
if unshare -m sh -c 'mount -t tmpfs none "$0" && [ ! -e "$0/README.md" ]' "$SRC" 2>/dev/null; then
	HIDE=1
else
	echo "note: no private mount namespace here (unshare -m); the source tree stays visible"
fi
out=$(run_hidden "$X" --version 2>&1)
RC=$?
[ "$RC" = 0 ] && grep -qx "cleanupctl $VERSION" <<<"$out" && grep -q '^schema [0-9]' <<<"$out" &&
	grep -q '^libpq [0-9]' <<<"$out" || bad "installed --version: $out"

# The default sandbox of an installed program: $XDG_STATE_HOME/cleanupctl/sandbox.
out=$(unset CLEANUP_SANDBOX_DIR; export XDG_STATE_HOME="$TMPD/state"; run_hidden "$X" --json sandbox status 2>&1)
[ "$(jq -r .dir <<<"$out" 2>/dev/null)" = "$TMPD/state/cleanupctl/sandbox" ] ||
	bad "installed default sandbox is not under \$XDG_STATE_HOME: $out"
out=$(unset CLEANUP_SANDBOX_DIR XDG_STATE_HOME; export HOME="$TMPD/home"; run_hidden "$X" --json sandbox status 2>&1)
[ "$(jq -r .dir <<<"$out" 2>/dev/null)" = "$TMPD/home/.local/state/cleanupctl/sandbox" ] ||
	bad "installed default sandbox without XDG_STATE_HOME is not ~/.local/state/cleanupctl/sandbox: $out"
# ... and the build tree's is still the checkout's .sandbox.
out=$(env -u CLEANUP_SANDBOX_DIR "$CLEANUPCTL" --json sandbox status 2>&1)
[ "$(jq -r .dir <<<"$out" 2>/dev/null)" = "$SRC/.sandbox" ] ||
	bad "the build tree's default sandbox is not the checkout's .sandbox: $out"

# console --theme NAME in tmux, the source tree hidden; prints the set of
# colour escapes on the screen once the dashboard is up, and the screen.
db_fresh cleanup_lab_pkg
HDB="host=$TMPD/sock port=$PORT dbname=cleanup_lab_pkg user=postgres"
[ "$HIDE" = 1 ] || HDB=$DB
console_colours() {
	local theme=$1 i screen
	T kill-server 2>/dev/null
	run_hidden tmux -L "$TSOCK" -f /dev/null new-session -d -x 120 -y 36 \
		"env XDG_CONFIG_HOME=$TMPD/config TERM=xterm-256color '$X' --db '$HDB' console --theme '$theme'; sleep 30"
	for i in $(seq 1 150); do
		screen=$(T capture-pane -p 2>/dev/null)
		grep -q 'servers' <<<"$screen" && break
		sleep 0.1
	done
	# The set of colour escapes once two looks 0.2 s apart agree: tmux can
	# show the title before it has read the rest of the first redraw.
	local was="" now=""
	for i in $(seq 1 50); do
		now=$(T capture-pane -p -e | grep -o $'\e\\[[0-9;]*m' | sort -u | tr -d '\e' | tr '\n' ' ')
		[ -n "$now" ] && [ "$now" = "$was" ] && break
		was=$now
		sleep 0.2
	done
	T capture-pane -p >"$TMPD/screen-$theme"
	echo "$now"
	T send-keys q
}
light=$(console_colours light)
# The header's title gives way to the connection (the sandbox's long
# socket path here); the database it names is the dashboard's.
grep -q 'cleanup_lab_pkg' "$TMPD/screen-light" && grep -q 'servers' "$TMPD/screen-light" ||
	bad "the installed console did not show its dashboard: $(head -5 "$TMPD/screen-light")"
grep -q 'using the default theme' "$TMPD/screen-light" &&
	bad "installed console --theme light fell back to the default: $(grep 'theme' "$TMPD/screen-light")"
dark=$(console_colours dark)
[ -n "$light" ] && [ "$light" != "$dark" ] ||
	bad "installed console --theme light looks like the default theme (colours: $light)"
console_colours no-such-theme >/dev/null
grep -q 'no-such-theme' "$TMPD/screen-no-such-theme" ||
	bad "a missing theme is not reported on the console's screen"
T kill-server 2>/dev/null

# An outside program links the engine: pkg-config and find_package (with
# the sanitizers when the library was built with them).
nm "$P/$LIBDIR/libcleanup.a" >"$TMPD/nm" 2>/dev/null
SANFLAGS=
grep -q __asan "$TMPD/nm" && SANFLAGS="-fsanitize=address,undefined"
# The installed library is only the engine: the lab
# tools (sandbox, seed, simulated writer) and their headers stay in the
# build tree's cleanup_lab.
[ -s "$TMPD/nm" ] || bad "nm could not read the installed libcleanup.a"
for sym in cleanup_sandbox_init cleanup_seed cleanup_writer_run; do
	grep -q " T $sym\$" "$TMPD/nm" && bad "the installed engine library defines the lab function $sym"
done
grep -q " T cleanup_schema_version\$" "$TMPD/nm" || bad "the installed engine library lacks cleanup_schema_version"
for h in sandbox seed writer lab hold; do
	[ -e "$P/include/cleanup/$h.h" ] && bad "the lab header cleanup/$h.h was installed"
done
cat >"$TMPD/outside.c" <<'EOF'
#include <stdio.h>
#include "cleanup/install.h"
int main(void) { printf("schema %d\n", cleanup_schema_version()); return 0; }
EOF
if flags=$(PKG_CONFIG_PATH="$P/$LIBDIR/pkgconfig" pkg-config --define-variable=prefix="$P" --cflags --libs cleanup); then
	# shellcheck disable=SC2086
	cc -o "$TMPD/outside" "$TMPD/outside.c" $flags $SANFLAGS 2>"$TMPD/cc.err" ||
		bad "an outside program does not link with pkg-config --libs cleanup: $(cat "$TMPD/cc.err")"
	out=$("$TMPD/outside" 2>&1)
	grep -q "^schema [0-9]" <<<"$out" || bad "the outside program linked with libcleanup printed: $out"
else
	bad "pkg-config does not find cleanup in $P/$LIBDIR/pkgconfig"
fi
mkdir -p "$TMPD/cm"
cat >"$TMPD/cm/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.22)
project(outside C)
find_package(cleanup REQUIRED)
add_executable(outside ../outside.c)
target_link_libraries(outside PRIVATE cleanup::cleanup)
EOF
if ! cmake -S "$TMPD/cm" -B "$TMPD/cm/b" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_FLAGS="$SANFLAGS" >"$TMPD/cm.log" 2>&1 ||
	! cmake --build "$TMPD/cm/b" >>"$TMPD/cm.log" 2>&1; then
	bad "find_package(cleanup) does not build an outside program: $(tail -5 "$TMPD/cm.log")"
fi

# --- 3. The .deb -------------------------------------------------------------
if ! command -v dpkg-deb >/dev/null; then
	echo "note: no dpkg-deb: the .deb part is skipped"
else
	if ! (cd "$BLD" && cpack -G DEB -B "$TMPD/pkg") >"$TMPD/cpack.log" 2>&1; then
		bad "cpack -G DEB failed: $(tail -5 "$TMPD/cpack.log")"
	fi
	deb=$(ls "$TMPD"/pkg/cleanupctl_*.deb 2>/dev/null | head -1)
	dev=$(ls "$TMPD"/pkg/libcleanup-dev_*.deb 2>/dev/null | head -1)
	if [ -z "$dev" ]; then
		bad "cpack made no libcleanup-dev package"
	else
		dpkg-deb --contents "$dev" >"$TMPD/dev-contents"
		for f in /usr/include/cleanup/job.h pkgconfig/cleanup.pc cmake/cleanup/cleanupConfig.cmake libcleanup.a; do
			grep -qF "$f" "$TMPD/dev-contents" || bad "libcleanup-dev does not hold $f"
		done
		[ "$(dpkg-deb -f "$dev" Depends)" = libpq-dev ] || bad "libcleanup-dev Depends: $(dpkg-deb -f "$dev" Depends)"
		# The .deb's library (stripped by CPack) exports only cleanup_*
		# too (cli_test_symbols checks the installed one).
		dpkg -x "$dev" "$TMPD/devroot"
		devlib=$(find "$TMPD/devroot" -name libcleanup.a | head -1)
		foreign=$(foreign_symbols "$devlib")
		[ -z "$foreign" ] || bad "the .deb's libcleanup.a exports globals not prefixed cleanup_: $(tr '\n' ' ' <<<"$foreign")"
		[ "$(public_symbols "$devlib")" -ge 50 ] || bad "the .deb's libcleanup.a exports no public API"
	fi
	if [ -z "$deb" ]; then
		bad "cpack made no .deb"
	else
		info=$(dpkg-deb -f "$deb" Package Version Depends)
		grep -q '^Package: cleanupctl$' <<<"$info" || bad ".deb package name: $info"
		grep -q "^Version: $VERSION" <<<"$info" || bad ".deb version: $info"
		deps=$(dpkg-deb -f "$deb" Depends)
		grep -q 'libpq5' <<<"$deps" || bad ".deb Depends lacks libpq5: $deps"
		grep -qE 'libncursesw6|libtinfo6' <<<"$deps" || bad ".deb Depends lacks ncurses: $deps"
		if grep -q '^#define HAVE_READLINE 1' "$BLD/config.h"; then
			grep -q 'libreadline8' <<<"$deps" || bad ".deb Depends lacks libreadline8: $deps"
		fi
		dpkg-deb --contents "$deb" >"$TMPD/contents"
		grep -q '/usr/share/cleanupctl/themes/light.theme' "$TMPD/contents" ||
			bad ".deb does not hold the themes"
		grep -q 'libcleanup.a\|/usr/include/' "$TMPD/contents" && bad "the cleanupctl .deb holds the library or headers"
		R=$TMPD/root
		dpkg -x "$deb" "$R"
		out=$(run_hidden "$R/usr/bin/cleanupctl" --version 2>&1)
		RC=$?
		[ "$RC" = 0 ] && grep -qx "cleanupctl $VERSION" <<<"$out" || bad "cleanupctl --version from the .deb: $out"
		page=$(ls "$R"/usr/share/man/man1/cleanupctl.1* 2>/dev/null | head -1)
		if [ -z "$page" ]; then
			bad ".deb has no cleanupctl(1)"
		elif command -v man >/dev/null; then
			rendered=$(LC_ALL=C MANWIDTH=80 man -l "$page" 2>/dev/null | sed 's/.\x08//g')
			grep -q -- '--wait' <<<"$rendered" ||
				bad "man -l of the .deb's cleanupctl(1) does not render the job options"
		elif command -v groff >/dev/null; then
			rendered=$(zcat -f "$page" | groff -man -Tascii 2>/dev/null)
			grep -q 'wait' <<<"$rendered" || bad "groff of cleanupctl(1)"
		fi
		comp=$R/usr/share/bash-completion/completions/cleanupctl
		got=$(PATH="$R/usr/bin:$PATH" bash --norc --noprofile -c '
			source "$1" || exit 1
			complete -p cleanupctl >/dev/null || exit 1
			COMP_WORDS=(cleanupctl console --theme hi); COMP_CWORD=3; _cleanupctl
			printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" 2>&1)
		grep -qx high-contrast <<<"$got" || bad "the .deb's bash completion: --theme hi<TAB> gave: $got"
	fi
fi

if [ "$FAILS" -gt 0 ]; then
	echo "$FAILS failed"
	exit 1
fi
echo "package: install, relocation, hidden source tree (hidden=$HIDE), pkg-config, find_package, .deb: all passed"
