#!/usr/bin/env bash
# The man pages and the bash and zsh completions are complete: every
# command (each cli_command defined in tui/, each job subcommand) and every
# option that a command's source parses (each "--option" literal in
# tui/cli/cmd_*.c, the global ones in tui/main.c) appears in cleanupctl(1)
# under that command, in the bash completion's word list for it, and in
# the zsh completion's block for it. The files are the ones the build
# generated (cleanupctl-gendoc, from the parser's tables), so an option
# added to a parser and not to its table fails here. The console page
# lists every key of keys.c and every `:` command of console_cmd.c (and no
# other); demo's scenarios (cmd_demo.c's table) are in its usage, its
# error, the man page and both completions. Also: the pages render
# without groff warnings, the bash completion loads in a plain bash and
# completes commands, subcommands, options and theme names.
: "${CLEANUPCTL:?run through ctest}" "${CLEANUP_SOURCE_DIR:?}" "${CLEANUP_BINARY_DIR:?}"
set -uo pipefail

DOC=$CLEANUP_BINARY_DIR/doc
MAN=$DOC/cleanupctl.1
CMAN=$DOC/cleanupctl-console.1
BASH_C=$DOC/cleanupctl.bash
ZSH_C=$DOC/_cleanupctl
FAILS=0
CHECKS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
check() { CHECKS=$((CHECKS + 1)); }

for f in "$MAN" "$CMAN" "$BASH_C" "$ZSH_C"; do
	[ -s "$f" ] || { echo "FAIL: $f was not generated"; exit 1; }
done

# man_section CMD: the roff text of command CMD's section in cleanupctl(1).
man_section() {
	awk -v c="$1" '/^\.S[SH] / { on = ($0 ~ "^\\.SS \"" c "( |\")") } on' "$MAN"
}
# man_globals: the GLOBAL OPTIONS section.
man_globals() { awk '/^\.S[SH] / { on = ($0 == ".SH GLOBAL OPTIONS") } on' "$MAN"; }
# bash_words CTX: the word list the bash completion offers in context CTX
# ("status", "job:create").
bash_words() { grep -E "^	$1\) COMPREPLY=" "$BASH_C"; }
# zsh_block CMD: the zsh completion's block for CMD.
zsh_block() { awk -v c="$1" '/^		[a-z-]+\)$/ { on = ($0 == "		" c ")") } /^		esac ;;/ { on = 0 } on' "$ZSH_C"; }
roff_opt() { sed 's/-/\\-/g' <<<"$1"; }

# has_option CMD OPT [SUB]: OPT documented and completed for CMD.
has_option() {
	local cmd=$1 opt=$2 sub=${3:-} ctx=$1
	[ -n "$sub" ] && ctx="$cmd:$sub"
	check
	man_section "$cmd" | grep -qF -- "\\fB$(roff_opt "$opt")\\fR" ||
		fail "cleanupctl(1) does not document $opt under $cmd"
	bash_words "$ctx" | grep -qE -- " $opt( |\")" || fail "the bash completion does not offer $opt for $ctx"
	zsh_block "$cmd" | grep -qF -- "'$opt[" || fail "the zsh completion does not offer $opt for $cmd"
}

# 1. Commands: every descriptor defined in tui/ is in --help, the man page
#    and both completions.
mapfile -t defined < <(grep -ho 'const cli_command cmd_[a-z_]*_entry = {' "$CLEANUP_SOURCE_DIR"/tui/cli/*.c |
	sed 's/const cli_command \(cmd_[a-z_]*_entry\).*/\1/')
[ "${#defined[@]}" -ge 10 ] || fail "found only ${#defined[@]} command descriptors in tui/"
helpcmds=$("$CLEANUPCTL" --help | awk '/^commands:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }')
# Descriptors defined but not yet registered in cli_commands (each waits for
# its README section, which tests/cli/test_readme.sh requires of every
# command in --help). Remove a name here when it is registered.
NOT_YET_REGISTERED=" "
for entry in "${defined[@]}"; do
	[[ $NOT_YET_REGISTERED == *" $entry "* ]] && { echo "note: $entry is not registered yet"; continue; }
	name=$(grep -h -A2 "const cli_command $entry = {" "$CLEANUP_SOURCE_DIR"/tui/cli/*.c | grep -o '"[a-z-]*"' | head -1 | tr -d '"')
	check
	grep -qx "$name" <<<"$helpcmds" || fail "command $name ($entry) is not in the command table (cleanupctl --help)"
	grep -q "^\.SS \"$name[ \"]" "$MAN" || fail "cleanupctl(1) has no section for command $name"
	grep -qE "^	''\) COMPREPLY=.* $name( |\")" "$BASH_C" ||
		fail "the bash completion does not offer command $name"
	grep -qF "'$name:" "$ZSH_C" || fail "the zsh completion does not offer command $name"
done

# 2. Job subcommands: each dispatched name ("job --help") everywhere.
mapfile -t subs < <("$CLEANUPCTL" job --help | awk '$1 == "job" { print $2 }')
[ "${#subs[@]}" -ge 9 ] || fail "job --help lists ${#subs[@]} subcommands, expected at least 9"
for s in "${subs[@]}"; do
	check
	grep -qF "\\fBjob $s\\fR" "$MAN" || fail "cleanupctl(1) does not document job $s"
	bash_words "job" | grep -qE " $s( |\")" || fail "the bash completion does not offer job $s"
	grep -qF "'$s:" "$ZSH_C" || fail "the zsh completion does not offer job $s"
done

# 3. Options: every "--option" a command's source names (its table: the
#    parser reads nothing else, 3d). Words on a line
#    that starts another program (demo's writer: execl) are that program's.
for src in "$CLEANUP_SOURCE_DIR"/tui/cli/cmd_*.c; do
	# the first quoted word after each descriptor is its name
	mapfile -t cmds < <(awk '/const cli_command cmd_[a-z_]*_entry = \{/ { want = 1 }
		want && match($0, /"[a-z-]+"/) { print substr($0, RSTART + 1, RLENGTH - 2); want = 0 }' "$src")
	case $src in */cmd_job.c | */cmd_job_step.c) cmds=(job) ;; */cmd_counts.c) continue ;; esac
	mapfile -t opts < <(grep -v 'execl' "$src" | grep -o '"--[a-z][a-z-]*"' | tr -d '"' | sort -u)
	for opt in "${opts[@]}"; do
		found=0
		for c in "${cmds[@]}"; do
			if [ "$c" = job ]; then
				# under the job subcommands that take it: at least one
				man_section job | grep -qF -- "\\fB$(roff_opt "$opt")\\fR" && found=1
			elif man_section "$c" | grep -qF -- "\\fB$(roff_opt "$opt")\\fR"; then
				found=1
				has_option "$c" "$opt"
			fi
		done
		check
		[ "$found" = 1 ] || fail "$opt (parsed in ${src##*/}) is not documented under ${cmds[*]} in cleanupctl(1)"
	done
done

# 3b. Each job subcommand's options, from its --help usage, in all three.
while read -r _ s usage; do
	for opt in $(grep -o -- '--[a-z][a-z-]*' <<<"$usage" | sort -u); do
		has_option job "$opt" "$s"
	done
done < <("$CLEANUPCTL" job --help | awk '$1 == "job" { if (l) print l; l = $0; next }
	/^       / { l = l " " $0; next } { if (l) print l; l = "" } END { if (l) print l }')

# 3c. The global options main.c parses.
for opt in $(grep -o '"--[a-z][a-z-]*"' "$CLEANUP_SOURCE_DIR/tui/main.c" | tr -d '"' | sort -u); do
	check
	man_globals | grep -qF -- "\\fB$(roff_opt "$opt")\\fR" || fail "global option $opt is not in cleanupctl(1)"
	grep -qE "^	local globals=\".*$opt( |\")" "$BASH_C" || fail "the bash completion does not offer $opt"
	grep -qF -- "'$opt[" "$ZSH_C" || fail "the zsh completion does not offer $opt"
done

# 3d. Descriptors that parse (tmux's cmd_entry): the option table is the
#     parser, the usage line and --help, so no command parses argv itself
#     and no descriptor writes its options into its usage words.
for src in "$CLEANUP_SOURCE_DIR"/tui/cli/cmd_*.c "$CLEANUP_SOURCE_DIR/tui/main.c"; do
	check
	hand=$(grep -nE 'str(n)?cmp\([^;]*"-|cli_opt\(|cli_no_repeats|cli_step_option|argv\[[^]]*\]\[[0-9]+\] *== *.-' "$src")
	[ -z "$hand" ] || fail "${src##*/} parses options by hand (the table's parser does): $hand"
	# the usage words of each descriptor (the second string of "const
	# cli_command cmd_x_entry = {", of each row of a cli_subcommand table)
	while IFS= read -r u; do
		check
		[[ $u != *--* ]] || fail "${src##*/}: usage words \"$u\" name an option: the usage line comes from the table"
	done < <(awk '/const cli_command cmd_[a-z_]*_entry = \{/ { want = 2 }
		/^const cli_subcommand [a-z_]*\[\] = \{/ { rows = 1; next } rows && /^};/ { rows = 0 }
		rows && /^\t\{"[a-z]+", "/ { split($0, q, "\""); print q[4]; next }
		want { while (want && match($0, /"[^"]*"/)) { w = substr($0, RSTART + 1, RLENGTH - 2);
			$0 = substr($0, RSTART + RLENGTH); if (--want == 0) print w } }' "$src")
done
# Each command's --help: its usage line names each option of the man page's
# section once (both from the table), and its options list shows each.
for cmd in $("$CLEANUPCTL" --help | awk '/^commands:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }'); do
	[ "$cmd" = job ] && continue
	help=$("$CLEANUPCTL" "$cmd" --help 2>&1)
	usage=$(sed -n 's/^usage: cleanupctl //p' <<<"$help" | head -1)
	documented=$(man_section "$cmd" | grep -oE '^\\fB(\\-)+[a-z][a-z\\-]*\\fR' | sed 's/\\fB//; s/\\fR//; s/\\-/-/g' | sort)
	in_usage=$(grep -oE -- '--[a-z][a-z-]*' <<<"$usage" | sort)
	aliases=$(comm -23 <(echo "$documented") <(echo "$in_usage" | sort -u))
	check
	[ "$(echo "$in_usage" | uniq -d)" = "" ] || fail "$cmd --help: an option twice in the usage line: $usage"
	[ -z "$(comm -13 <(echo "$documented") <(echo "$in_usage" | sort -u))" ] ||
		fail "$cmd --help: the usage line names an option the table lacks: $usage"
	for opt in $documented; do
		check
		grep -qE -- "^  $opt( |$)" <<<"$help" || fail "$cmd --help does not list $opt (from its table)"
	done
	for opt in $aliases; do
		# only an alias row (the same field under another name) stays out of the usage line
		grep -qE -- "^  $opt +the same as --" <<<"$help" || fail "$cmd --help: $opt is in the table but not the usage line"
	done
done

# 4. The console page: every key of the key table, every console option.
while IFS= read -r key; do
	check
	grep -qF -- ".B $(sed 's/-/\\-/g' <<<"$key")" "$CMAN" || fail "cleanupctl-console(1) does not list key $key"
done < <(grep -o '^	{"[^"]*", "' "$CLEANUP_SOURCE_DIR/tui/console/keys.c" | sed 's/^	{"\(.*\)", "$/\1/')
for opt in $(grep -o '"--[a-z][a-z-]*"' "$CLEANUP_SOURCE_DIR/tui/cli/cmd_console.c" | tr -d '"' | sort -u); do
	check
	grep -qF -- "\\fB$(roff_opt "$opt")\\fR" "$CMAN" || fail "cleanupctl-console(1) does not document $opt"
done

# 4b. The console's `:` commands (console_cmd.c's table) in the page's
#     COMMAND LINE section, and nowhere a command the table lacks.
cmdline_section=$(awk '/^\.SH / { on = ($0 == ".SH COMMAND LINE") } on' "$CMAN")
mapfile -t ccmds < <(grep -oE '^	\{"[a-z-]+", ARG_' "$CLEANUP_SOURCE_DIR/tui/console/console_cmd.c" | sed 's/^	{"\([a-z-]*\)".*/\1/')
[ "${#ccmds[@]}" -ge 15 ] || fail "found only ${#ccmds[@]} console commands in console_cmd.c"
for cc in "${ccmds[@]}"; do
	check
	grep -qF -- "\\fB$(sed 's/-/\\-/g' <<<"$cc")\\fR" <<<"$cmdline_section" ||
		fail "cleanupctl-console(1) COMMAND LINE does not list :$cc"
done
check
[ "$(grep -c '^\.TP' <<<"$cmdline_section")" = "${#ccmds[@]}" ] ||
	fail "cleanupctl-console(1) COMMAND LINE lists $(grep -c '^\.TP' <<<"$cmdline_section") commands, the table ${#ccmds[@]}"
# The actions the console offers (terminate-holder, kill-runner ...) as keys.
for word in terminate kill; do
	check
	grep -qi "$word" <<<"$(awk '/^\.SH / { on = ($0 == ".SH KEYS") } on' "$CMAN")" || fail "cleanupctl-console(1) KEYS: no $word"
done

# 4c. The demo scenarios (cmd_demo.c's table): in the usage, the man page,
#     the unknown-scenario error, and both completions.
mapfile -t scen < <(sed -n 's/^const char \*const cli_demo_scenarios\[\] = {\(.*\)};/\1/p' \
	"$CLEANUP_SOURCE_DIR/tui/cli/cmd_demo.c" | grep -oE '"[a-z-]+"' | tr -d '"')
[ "${#scen[@]}" -ge 4 ] || fail "found only ${#scen[@]} demo scenarios in cmd_demo.c"
demo_err=$("$CLEANUPCTL" demo no-such-scenario 2>&1)
for sc in "${scen[@]}"; do
	check
	man_section demo | grep -qF -- "$(sed 's/-/\\-/g' <<<"$sc")" || fail "cleanupctl(1) demo does not name scenario $sc"
	grep -qE "(: |, )$sc(,|$)" <<<"$demo_err" || fail "demo's unknown-scenario error does not list $sc: $demo_err"
	bash_words demo | grep -qE " $sc( |\")" || fail "the bash completion does not offer demo $sc"
	zsh_block demo | grep -qE "[( ]$sc[ )]" || fail "the zsh completion does not offer demo $sc"
done

# 5. The pages render without warnings (groff), and man -l shows them.
for page in "$MAN" "$CMAN"; do
	if command -v groff >/dev/null 2>&1; then
		check
		warn=$(groff -man -ww -z "$page" 2>&1)
		[ -z "$warn" ] || fail "groff warns on ${page##*/}: $warn"
	fi
	if command -v man >/dev/null 2>&1; then
		check
		out=$(LC_ALL=C MANWIDTH=80 man -l "$page" 2>/dev/null | sed 's/.\x08//g')
		grep -q '^SYNOPSIS' <<<"$out" || fail "man -l ${page##*/} renders no synopsis"
	fi
done
command -v groff >/dev/null 2>&1 || echo "note: no groff here: the pages were not rendered"

# 6. The bash completion loads in a plain bash and completes.
complete_words() { # complete_words WORD... : what TAB offers after the words (the last is the current one)
	bash --norc --noprofile -c '
		source "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_cleanupctl; printf "%s\n" "${COMPREPLY[@]}"' _ "$BASH_C" "$@"
}
check
bash -n "$BASH_C" || fail "the bash completion has a syntax error"
grep -qx job <<<"$(complete_words cleanupctl jo)" || fail "bash: cleanupctl jo<TAB> does not offer job"
grep -qx create <<<"$(complete_words cleanupctl job cr)" || fail "bash: job cr<TAB> does not offer create"
grep -qx -- --wait <<<"$(complete_words cleanupctl job pause 5 --w)" || fail "bash: job pause --w<TAB> does not offer --wait"
grep -qx -- --expected <<<"$(complete_words cleanupctl --db x job seal 5 --ex)" ||
	fail "bash: --db x job seal --ex<TAB> does not offer --expected"
grep -qx single-transaction <<<"$(complete_words cleanupctl job create remove-library --mode s)" ||
	fail "bash: --mode s<TAB> does not offer single-transaction"
grep -qx light <<<"$(complete_words cleanupctl console --theme l)" || fail "bash: --theme l<TAB> does not offer light"
grep -qx off <<<"$(complete_words cleanupctl job run 1 --synchronous-commit o)" || fail "bash: --synchronous-commit o<TAB>"
for sc in "${scen[@]}"; do
	grep -qx -- "$sc" <<<"$(complete_words cleanupctl demo "")" || fail "bash: demo <TAB> does not offer $sc"
done
if command -v zsh >/dev/null 2>&1; then
	check
	zsh -n "$ZSH_C" || fail "the zsh completion has a syntax error"
fi

echo "man/completion completeness: $CHECKS checks"
if [ "$FAILS" -gt 0 ]; then
	echo "$FAILS failed"
	exit 1
fi
echo "all passed"
