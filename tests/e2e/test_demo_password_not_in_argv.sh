# The demo never puts the operator's conninfo on the command line of a
# program it starts (docs/security.md, "Passwords in --db"): every local
# user may read /proc/PID/cmdline, so a password there is everyone's. While
# `cleanupctl demo` runs on a conninfo holding password=s3cret-demo (the
# test sandbox trusts local connections: the password is accepted and
# ignored), its children are first observed connected to this test's
# database (pg_stat_activity, scoped to it), which they can only have found
# through CLEANUPCTL_DB; then, while they still run, every process's
# command line is read:
#  1. kill-runner, the conninfo in CLEANUPCTL_DB (set by a script file, so
#     that no shell or tmux command line holds it either): two writers and
#     a runner run; no process at all holds the password;
#  2. busy-fence, the conninfo in --db (the operator's own command line
#     shows it): two writers, the conductor and its seal (answered busy,
#     exit 3: it reached the holder's database); the password is held only
#     by the demo, by the conductor (a fork of the demo, not a program it
#     started: its command line is the demo's) and by the shell and tmux
#     above the demo, never by a program the demo executed.
# The conninfo travels in the children's environment, readable by their
# user only (/proc/PID/environ, mode 0400). The scan is shown to see what
# it must: the children's command lines, and the demo's own with --db.
# Every wait observes the screen or the database; no sleeps.
. "$(dirname "$0")/lib.sh"

SECRET=s3cret-demo
db_fresh demo_argv
J=1 # the scenario's fresh job; its runner stays alive, held inside step 3

# cmdline_of PID: its arguments joined by spaces (no process forked).
cmdline_of() {
	local args=()
	{ mapfile -d '' args <"/proc/$1/cmdline"; } 2>/dev/null || return 1
	printf '%s' "${args[*]}"
}
# pids_with TEXT: the pid of every process whose command line holds TEXT.
pids_with() {
	local f pid line
	for f in /proc/[0-9]*/cmdline; do
		pid=${f#/proc/}
		pid=${pid%/cmdline}
		line=$(cmdline_of "$pid") || continue
		[[ $line == *"$1"* ]] && echo "$pid"
	done
}
# parent_of PID: its parent's pid (field 4 of /proc/PID/stat).
parent_of() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	set -- $s
	echo "$2"
}
# descends PID ANCESTOR: PID is a child, grandchild, ... of ANCESTOR.
descends() {
	local p=$1
	while p=$(parent_of "$p") && [ "$p" -gt 1 ]; do
		[ "$p" = "$2" ] && return 0
	done
	return 1
}
# demo_pid SCENARIO: the pid of the running `cleanupctl ... demo SCENARIO`
# of this test: one that descends from this test's tmux server (its socket,
# lib.sh's TMUX_SOCKET, is this test's own; other demo tests run the same
# command at the same time), and not a fork of it such as the conductor
# (whose parent has the same command line).
demo_pid() {
	local p line s
	for p in $(pids_with " demo $1"); do
		line=$(cmdline_of "$p")
		[[ $line == "$CLEANUPCTL "* ]] || continue
		[ "$(cmdline_of "$(parent_of "$p")")" != "$line" ] || continue
		for s in $(pids_with "tmux -L $TMUX_SOCKET "); do
			descends "$p" "$s" && { echo "$p"; return 0; }
		done
	done
	return 1
}
# env_holds PID VALUE: PID's environment holds CLEANUPCTL_DB=VALUE, and it
# is readable by its user only.
env_holds() {
	local vars=() v
	[ "$(stat -c %a "/proc/$1/environ" 2>/dev/null)" = 400 ] || return 1
	mapfile -d '' vars <"/proc/$1/environ" || return 1
	for v in "${vars[@]}"; do
		[ "$v" = "CLEANUPCTL_DB=$2" ] && return 0
	done
	return 1
}
# children_seen DEMO PATTERN N: N processes whose command line holds
# PATTERN (a program the demo executed: "cleanupctl writer ...") descend
# from DEMO; their pids in KIDS.
children_seen() {
	local p
	KIDS=()
	for p in $(pids_with "$2"); do
		descends "$p" "$1" && KIDS+=("$p")
	done
	[ "${#KIDS[@]}" = "$3" ]
}
writers_q="SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name ~ '^cleanupctl:writer:[0-9]+\$'"

# 1. CLEANUPCTL_DB, kill-runner: no process holds the password.
CONN="$DB password=$SECRET"
printf 'CLEANUPCTL_DB=%q\nexport CLEANUPCTL_DB\n%q demo kill-runner\n' "$CONN" "$CLEANUPCTL" >"$E2E_TMP/demo-env.sh"
demo_console "demo kill-runner: job $J (library" 1 "sh '$E2E_TMP/demo-env.sh'"
wait_sql "$writers_q" 2 15 && ok "kill-runner: two writers connected to this database" || fail "kill-runner: writers"
wait_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'cleanupctl:job:$J:run'" 1 15 &&
	ok "kill-runner: the runner connected to this database" || fail "kill-runner: no runner"
DEMO=$(demo_pid kill-runner) || fail "kill-runner: the demo's process not found"
LEAKS=$(pids_with "$SECRET")
[ -z "$LEAKS" ] && ok "kill-runner on CLEANUPCTL_DB: no process's command line holds the password" ||
	fail "the password is on the command line of: $(for p in $LEAKS; do echo "[$p] $(cmdline_of "$p")"; done)"
children_seen "${DEMO:-0}" "cleanupctl writer --rate " 2 && W1=${KIDS[0]} &&
	children_seen "${DEMO:-0}" "cleanupctl job run $J --max-rate 1" 1 &&
	ok "the scan saw the demo's children: two writers and the runner" ||
	fail "the scan missed the demo's children (demo ${DEMO:-?})"
env_holds "${W1:-0}" "$CONN" && env_holds "${KIDS[0]:-0}" "$CONN" &&
	ok "the conninfo is in the children's environment (CLEANUPCTL_DB), readable by their user only" ||
	fail "the children's environment (writer ${W1:-none})"
[ "$(sql "$writers_q")" = 2 ] && ok "the children still ran after the scan" || fail "the children ended before the scan"
capture demo-argv-1-env
demo_quit

# 2. --db, busy-fence: only the demo (and its fork, the conductor) and what
#    started it hold the password; no program the demo executed does.
ROWS=90 start_cmd "'$CLEANUPCTL' --db '$CONN' demo busy-fence" # 90 rows: see demo_console
wait_re "demo busy-fence: job [0-9]+ prunes library" 30 && ok "busy-fence on --db: narrated" || fail "no narration"
wait_sql "$writers_q" 2 15 && ok "busy-fence: two writers connected to this database" || fail "busy-fence: writers"
wait_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'cleanupctl:writer:holder' AND state = 'idle in transaction'" 1 20 ||
	fail "busy-fence: no holder"
wait_re "job seal [0-9]+ --expected [0-9]+\`: busy \(exit 3\)" 30 &&
	ok "the conductor's seal child reached this database: busy (exit 3)" || fail "the seal's answer"
DEMO=$(demo_pid busy-fence) || fail "busy-fence: the demo's process not found"
DEMO_LINE=$(cmdline_of "${DEMO:-0}")
LEAKS=$(pids_with "$SECRET")
[[ " $(tr '\n' ' ' <<<"$LEAKS") " == *" ${DEMO:-none} "* ]] &&
	ok "the scan sees the password on the demo's own command line (--db)" ||
	fail "the scan missed the demo's --db"
for p in $LEAKS; do
	[ "$p" = "$DEMO" ] && continue
	descends "$DEMO" "$p" && continue # the shell and tmux above the demo
	descends "$p" "$DEMO" && [ "$(cmdline_of "$p")" = "$DEMO_LINE" ] && continue # a fork: the conductor
	fail "the password is on the command line of [$p] $(cmdline_of "$p") (parent $(parent_of "$p"))"
done
children_seen "${DEMO:-0}" "cleanupctl writer --rate " 2 && W1=${KIDS[0]} &&
	ok "busy-fence: the scan saw the two writers, without the password" || fail "busy-fence: writers not seen"
env_holds "${W1:-0}" "$CONN" && ok "busy-fence: the writers got the conninfo in CLEANUPCTL_DB" ||
	fail "busy-fence: a writer's environment"
[ "$(sql "$writers_q")" = 2 ] && ok "the writers still ran after the scan" || fail "the writers ended before the scan"
demo_quit
finish
