#!/bin/bash
# docs/ is complete on its own: every relative link in
# the project's Markdown (README, CHANGELOG, docs/, themes/, fuzz/) names a
# file of the repository that exists, no link or path leaves the
# repository, and nothing points at the specification's original folder
# (../shared): the specification lives in docs/spec/.
: "${CLEANUP_SOURCE_DIR:?run through ctest}"
set -uo pipefail
cd "$CLEANUP_SOURCE_DIR" || exit 1
root=$(pwd -P)
fails=0

files=$(ls README.md CHANGELOG.md themes/README.md fuzz/README.md 2>/dev/null; find docs -name '*.md' | sort)
[ -n "$files" ] || { echo "FAIL: no Markdown files found under $root"; exit 1; }

for f in $files; do
	dir=$(dirname "$f")
	# Inline links [text](target) and reference definitions "[x]: target".
	# Code spans are removed first: `[a](b)` in a code span is not a link.
	targets=$(sed -e 's/`[^`]*`//g' "$f" |
		grep -oE '\]\([^) ]+\)|^\[[^]]+\]: *[^ ]+' |
		sed -E 's/^\]\(//; s/\)$//; s/^\[[^]]+\]: *//')
	for t in $targets; do
		case "$t" in
		http://* | https://* | mailto:* | '#'*) continue ;;
		esac
		path=${t%%#*}
		[ -n "$path" ] || continue
		full="$dir/$path"
		if [ ! -e "$full" ]; then
			echo "FAIL: $f links to '$t', which does not exist ($full)"
			fails=$((fails + 1))
			continue
		fi
		real=$(cd "$(dirname "$full")" && pwd -P)/$(basename "$full")
		case "$real" in
		"$root"/*) ;;
		*)
			echo "FAIL: $f links to '$t', outside the repository ($real)"
			fails=$((fails + 1))
			;;
		esac
	done
	if grep -n '\.\./shared' "$f" >/dev/null; then
		grep -n '\.\./shared' "$f" | sed "s|^|FAIL: $f names the specification's original folder: |"
		fails=$((fails + 1))
	fi
done

# The vendored specification is there and whole.
for s in INVARIANTS.md STYLE.md PRODUCT.md PERFORMANCE.md; do
	[ -s "docs/spec/$s" ] || { echo "FAIL: docs/spec/$s is missing"; fails=$((fails + 1)); }
done
n=$(ls docs/spec/seeds/*.txt 2>/dev/null | wc -l)
[ "$n" -eq 4 ] || { echo "FAIL: docs/spec/seeds holds $n seeds, expected 4"; fails=$((fails + 1)); }

if [ "$fails" -ne 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "ok: $(echo "$files" | wc -w) Markdown files, every relative link inside the repository"
