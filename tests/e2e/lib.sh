# Helpers for the console's end-to-end tests (sourced, not run): a fresh
# database in the test sandbox, the real binary started in tmux on a
# private socket, keys sent with send-keys, and the screen observed with
# capture-pane. Waiting for screen content polls capture-pane for the
# expected text with a timeout: that is observing, not sleeping as
# synchronisation.
#
# Under load and on broken machines: every tmux call is bounded (10 s); the
# library first checks that tmux runs and can start a session on a
# pseudo-terminal, and fails within seconds naming what is missing; a test
# whose tmux server died stops at once; the time limits of the waits are
# multiplied by E2E_WAIT_SCALE (default 3: a wait that succeeds returns as
# soon as it sees its text, so only a failing one takes longer), and after
# E2E_DEADLINE seconds (default 420, below ctest's 600) every further wait
# fails at once, so a broken test reports its failures instead of being
# killed by the timeout.
: "${CLEANUPCTL:?run through ctest}" "${CLEANUPCTL_NORL:?run through ctest}" "${CLEANUP_TEST_SANDBOX:?run through ctest}"
set -uo pipefail

E2E_WAIT_SCALE=${E2E_WAIT_SCALE:-3}
E2E_DEADLINE=${E2E_DEADLINE:-420}
FAILS=0
E2E_TMP=$(mktemp -d /tmp/cleanupctl-e2e.XXXXXX)
# One tmux server per console started (a fresh socket each time: a server
# being killed can still accept a new-session and then exit under it).
TMUX_N=0
TMUX_SOCKET="cleanupctl-e2e-$$-0"
T() { timeout 10 tmux -L "$TMUX_SOCKET" "$@"; }
E2E_TMUX_BROKEN=0
e2e_cleanup() {
	local n
	for n in "${HOLD_NAMES[@]}"; do
		hold_stop "$n"
	done
	((E2E_TMUX_BROKEN)) || timeout 5 tmux -L "$TMUX_SOCKET" kill-server 2>/dev/null
	rm -rf "$E2E_TMP"
}
trap e2e_cleanup EXIT

# e2e_abort REASON: the test cannot go on (no tmux, no terminal, tmux died):
# says why and exits 1 at once.
e2e_abort() {
	E2E_TMUX_BROKEN=1
	echo "FAIL: $*"
	echo "(an end-to-end test needs tmux and a pseudo-terminal; see docs/testing.md)"
	exit 1
}

# e2e_probe: tmux runs (tmux -V) and starts a session on a pseudo-terminal
# of a test socket of its own whose pane shows a command's output, within
# seconds; otherwise aborts with the reason.
e2e_probe() {
	local out i rc=0 version sock=$TMUX_SOCKET
	command -v tmux >/dev/null 2>&1 || e2e_abort "tmux is not installed (make deps installs it)"
	version=$(timeout 5 tmux -V 2>&1) || rc=$?
	((rc == 0)) || e2e_abort "tmux -V failed (exit $rc$( ((rc == 124)) && echo ": no answer in 5 s")): $version"
	[ -e /dev/ptmx ] || e2e_abort "no pseudo-terminal: /dev/ptmx does not exist"
	TMUX_SOCKET="cleanupctl-e2e-$$-probe"
	out=$(T -f /dev/null new-session -d -x 80 -y 24 "echo e2e-pty-ok; sleep 60" 2>&1) || rc=$?
	((rc == 0)) || e2e_abort "$version cannot start a session on a pseudo-terminal (exit $rc$( ((rc == 124)) &&
		echo ": no answer in 10 s")): ${out:-no message}"
	for ((i = 0; i < 100; i++)); do
		T capture-pane -p 2>/dev/null | grep -q e2e-pty-ok && break
		sleep 0.05
	done
	((i < 100)) || e2e_abort "tmux started a session, but its pane showed nothing within 5 s: $(T capture-pane -p 2>&1 | head -3)"
	T kill-server 2>/dev/null
	TMUX_SOCKET=$sock
}
e2e_probe

info=$("$CLEANUPCTL" --json sandbox status --dir "$CLEANUP_TEST_SANDBOX") ||
	e2e_abort "cleanupctl sandbox status failed for $CLEANUP_TEST_SANDBOX"
SOCK=$(jq -r .socket_dir <<<"$info")
PORT=$(jq -r .port <<<"$info")
ADMIN="host=$SOCK port=$PORT dbname=postgres user=postgres"
# psql from the server's bindir, not Debian's Perl wrapper (~100 ms a call
# on a busy machine; wait_sql polls it).
if [ -x "$(jq -r .bindir <<<"$info")/psql" ]; then
	E2E_PSQL="$(jq -r .bindir <<<"$info")/psql"
	psql() { "$E2E_PSQL" "$@"; }
fi

# wait_limit SECONDS: SECONDS scaled by E2E_WAIT_SCALE, or 0 past the
# deadline (the wait then looks once).
wait_limit() {
	if ((SECONDS >= E2E_DEADLINE)); then
		echo "(past the ${E2E_DEADLINE}s deadline of this test: not waiting)" >&2
		echo 0
	else
		echo $(($1 * E2E_WAIT_SCALE))
	fi
}

# The binaries under test: readline and the built-in line editor. A
# READLINE=OFF build has the built-in editor in cleanupctl too, so it is
# tested once, and the console's header says "cmdline: builtin".
if grep -q '^#define HAVE_READLINE 1' "${CLEANUP_BINARY_DIR:-.}/config.h"; then
	CMDLINE_BACKEND=readline
	BINARIES=("$CLEANUPCTL" "$CLEANUPCTL_NORL")
else
	CMDLINE_BACKEND=builtin
	BINARIES=("$CLEANUPCTL")
fi
bin_name() { case "$1" in "$CLEANUPCTL_NORL") echo builtin ;; *) echo "$CMDLINE_BACKEND" ;; esac; }
# fresh_for BIN PREFIX: starts a test's pass over the binary BIN: $name is
# BIN's line editor (bin_name) and $DB a fresh database PREFIX_$name.
fresh_for() {
	name=$(bin_name "$1")
	db_fresh "$2_$name"
}

fail() {
	echo "FAIL: $*"
	FAILS=$((FAILS + 1))
}
ok() { echo "ok: $*"; }

# db_fresh NAME [ITEMS]: drops and creates database cleanup_lab_e2e_NAME,
# installs the schema, seeds 2 servers x 2 libraries x ITEMS items (300 by
# default); sets $DB.
db_fresh() {
	local name="cleanup_lab_e2e_$1"
	psql -X -q "$ADMIN" -c "DROP DATABASE IF EXISTS $name WITH (FORCE)" -c "CREATE DATABASE $name" 2>/dev/null
	DB="host=$SOCK port=$PORT dbname=$name user=postgres"
	"$CLEANUPCTL" --quiet --db "$DB" install >/dev/null || { echo "FAIL: install into $name failed"; exit 1; }
	"$CLEANUPCTL" --quiet --db "$DB" seed --servers 2 --libraries 2 --items "${2:-300}" >/dev/null ||
		{ echo "FAIL: seed of $name failed"; exit 1; }
}

# sql QUERY: one value from $DB.
sql() { psql -X -q -t -A "$DB" -c "$1"; }

# hold_start NAME SQL: a psql session of its own (application_name NAME)
# runs SQL (a row lock, a LOCK TABLE) in a transaction it leaves open,
# sleeping; returns once that session is seen in pg_sleep, so its lock is
# taken. hold_stop NAME ends it (its transaction rolls back) and waits for
# its psql; e2e_cleanup ends every one still held at exit. Sessions are
# found in this test's database only: tests run in parallel on one cluster.
HOLD_NAMES=()
HOLD_PIDS=()
hold_start() {
	psql -X -q "$DB" -c "SET application_name = '$1'" -c "BEGIN" -c "$2" -c "SELECT pg_sleep(300)" >/dev/null 2>&1 &
	HOLD_NAMES+=("$1")
	HOLD_PIDS+=("$!")
	wait_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = '$1' AND wait_event = 'PgSleep'" 1 ||
		fail "the session $1 did not take its lock ($2)"
}
hold_stop() {
	local i
	sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = '$1'" >/dev/null 2>&1
	for i in "${!HOLD_NAMES[@]}"; do
		if [ "${HOLD_NAMES[i]}" = "$1" ]; then
			wait "${HOLD_PIDS[i]}" 2>/dev/null
			unset 'HOLD_NAMES[i]' 'HOLD_PIDS[i]'
		fi
	done
}
# blocker_start JOB: JOB's row held FOR UPDATE by the session e2e-blocker,
# so that every step of JOB is busy until blocker_stop.
blocker_start() { hold_start e2e-blocker "SELECT 1 FROM cleanup.jobs WHERE id = $1 FOR UPDATE"; }
blocker_stop() { hold_stop e2e-blocker; }
# locker_start: cleanup.library_stats locked ACCESS EXCLUSIVE by the session
# e2e-locker, so that the console's servers and libraries queries hit
# their statement timeout until locker_stop.
locker_start() { hold_start e2e-locker "LOCK TABLE cleanup.library_stats IN ACCESS EXCLUSIVE MODE"; }
locker_stop() { hold_stop e2e-locker; }

# cleanupctl_backends: the application names of this database's cleanupctl
# sessions, comma-separated ("" when none).
cleanupctl_backends() {
	sql "SELECT coalesce(string_agg(application_name, ', ' ORDER BY application_name), '') FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'cleanupctl:%'"
}

# sealed_job LIBRARY KEEP: a prune job on LIBRARY whose manifest holds the
# first KEEP external IDs, sealed; prints its id.
sealed_job() {
	local id
	id=$("$CLEANUPCTL" --json --db "$DB" job create prune --library "$1" | jq -r .id)
	seq 1 "$2" | sed "s/^/ext-$1-/" | "$CLEANUPCTL" --quiet --db "$DB" job append "$id" >/dev/null
	"$CLEANUPCTL" --quiet --db "$DB" job seal "$id" --expected "$2" >/dev/null
	echo "$id"
}

# at_size WxH: the size of the consoles started next (COLS and ROWS,
# exported).
at_size() {
	COLS=${1%x*}
	ROWS=${1#*x}
	export COLS ROWS
}

# start BIN [ARGS...]: runs BIN console ARGS in a new tmux session of
# 120x40 (COLS / ROWS override), with a private history directory. The
# pane stays after the console exits and prints its exit code.
start() {
	local bin=$1
	shift
	T kill-server 2>/dev/null
	TMUX_N=$((TMUX_N + 1))
	TMUX_SOCKET="cleanupctl-e2e-$$-$TMUX_N"
	T -f /dev/null new-session -d -x "${COLS:-120}" -y "${ROWS:-40}" \
		"env LANG=C.UTF-8 XDG_STATE_HOME='$E2E_TMP/state' XDG_CONFIG_HOME='$E2E_TMP/config' ${E2E_ENV:-} \
		 '$bin' --db '$DB' console $* ; echo CONSOLE-EXIT=\$?; sleep 600" ||
		e2e_abort "tmux new-session failed (exit $?) starting the console"
}

# start_cmd COMMAND: like start, for any shell command line.
start_cmd() {
	T kill-server 2>/dev/null
	TMUX_N=$((TMUX_N + 1))
	TMUX_SOCKET="cleanupctl-e2e-$$-$TMUX_N"
	T -f /dev/null new-session -d -x "${COLS:-120}" -y "${ROWS:-40}" \
		"env LANG=C.UTF-8 XDG_STATE_HOME='$E2E_TMP/state' XDG_CONFIG_HOME='$E2E_TMP/config' $1 ; echo CONSOLE-EXIT=\$?; sleep 600" ||
		e2e_abort "tmux new-session failed (exit $?) starting: $1"
}

# grab: the pane's text into SCREEN (and FLAT: as one line, so a message
# wrapped over two rows matches). Aborts the test when tmux cannot show it
# (its server died or hangs): every wait after that would only time out.
# Runs in the calling shell (not in a pipeline), so that the abort exits.
grab() {
	local rc=0
	SCREEN=$(T capture-pane -p 2>&1) || rc=$?
	((rc == 0)) || e2e_abort "tmux capture-pane failed (exit $rc; 124: no answer in 10 s): $SCREEN"
	FLAT=$(tr '\n' ' ' <<<"$SCREEN")
}

screen() { T capture-pane -p; }

# flat: the screen as one line (a message wrapped over two rows matches).
flat() { screen | tr '\n' ' '; }

# until_seen LIMIT TEST...: grabs the screen until `TEST...` succeeds, for
# at most LIMIT seconds (scaled, see wait_limit); 0 when it did.
until_seen() {
	local end
	end=$((SECONDS + $(wait_limit "$1")))
	shift
	while :; do
		grab
		"$@" && return 0
		((SECONDS < end)) || return 1
		sleep 0.05
	done
}
seen_text() { grep -qF -- "$1" <<<"$SCREEN" || grep -qF -- "$1" <<<"$FLAT"; }
seen_re() { grep -qE -- "$1" <<<"$SCREEN"; }
gone_text() { ! grep -qF -- "$1" <<<"$SCREEN"; }
# seen_dialog TEXT: TEXT in the dialog box (confirmations, the quit
# question) of the console's pane, its wrapped rows joined with one space:
# the columns of the dialog's text only, so panel text beside the box does
# not cut a phrase (console_draw.c draw_dialog: width min(COLS - 8, 78),
# centred, text 2 columns in).
seen_dialog() {
	local c w x
	c=$(T display-message -p '#{pane_width}' 2>/dev/null) || c=${COLS:-120}
	w=$((c - 8 < 78 ? c - 8 : 78))
	x=$(((c - w) / 2 + 2))
	DIALOG=$(LC_ALL=C.UTF-8 sed -E "s/^.{$x}(.{0,$((w - 4))}).*/\1/;t;d" <<<"$SCREEN" | tr '\n' ' ' | tr -s ' ')
	grep -qF -- "$1" <<<"$DIALOG"
}

# wait_screen WHAT SECONDS TEST ARG: until `TEST ARG` holds of the screen
# (until_seen, at most SECONDS, scaled); when it does not, prints the
# screen, saying it waited for WHAT, and returns 1.
wait_screen() {
	until_seen "$2" "$3" "$4" && return 0
	echo "--- screen (waited $(wait_limit "$2" 2>/dev/null)s for $1) ---"
	printf '%s\n---\n' "$SCREEN"
	return 1
}

# wait_for TEXT [SECONDS]: until the screen shows TEXT (fixed string; may
# be wrapped over rows).
wait_for() { wait_screen "\"$1\"" "${2:-10}" seen_text "$1"; }

# wait_dialog TEXT [SECONDS]: until the dialog box shows TEXT (seen_dialog).
wait_dialog() { wait_screen "\"$1\" in the dialog" "${2:-10}" seen_dialog "$1"; }

# wait_re REGEX [SECONDS]: until a row of the screen matches REGEX (ERE).
wait_re() { wait_screen "/$1/" "${2:-10}" seen_re "$1"; }

# wait_gone TEXT [SECONDS]: until the screen no longer shows TEXT.
wait_gone() { wait_screen "\"$1\" to go" "${2:-10}" gone_text "$1"; }

# wait_sql QUERY EXPECTED [SECONDS]: until QUERY returns EXPECTED.
wait_sql() {
	local end v=""
	end=$((SECONDS + $(wait_limit "${3:-10}")))
	while :; do
		v=$(sql "$1")
		[ "$v" = "$2" ] && return 0
		((SECONDS < end)) || break
		sleep 0.05
	done
	echo "wait_sql: \"$1\" gave \"$v\", expected \"$2\""
	return 1
}

# focus PANEL: Tab until PANEL ("log", "jobs", ...) is the focused panel
# (its title in brackets: "[log 3/13]"); false when it never is.
focus() {
	local i
	for i in 1 2 3 4 5 6 7; do
		wait_re "\[$1 [0-9]+/[0-9]+\]" 1 >/dev/null && return 0
		keys Tab
	done
	return 1
}

# keys KEY...: tmux send-keys (named keys like Enter, Tab, Escape work).
keys() { T send-keys "$@"; }
# type TEXT: literal text.
type_text() { T send-keys -l -- "$1"; }

# quit_console: q, then the pane reports exit 0.
quit_console() {
	keys q
	wait_for "CONSOLE-EXIT=0" 10
}

finish() {
	if [ "$FAILS" -gt 0 ]; then
		echo "$FAILS check(s) failed"
		exit 1
	fi
	echo "all checks passed"
	exit 0
}

# private_sandbox NAME ITEMS: a PostgreSQL sandbox of this test only
# ($CLEANUP_BINARY_DIR/e2e-sb-NAME, stopped and removed at exit), for a
# test that stops its server: the shared one serves the tests running
# beside it. Installs and seeds its cleanup_lab database (2 servers x 2
# libraries x ITEMS items); sets DB to it and PRIVATE_SANDBOX.
PRIVATE_SANDBOX=
private_sandbox_stop() {
	[ -n "$PRIVATE_SANDBOX" ] || return 0
	"$CLEANUPCTL" --quiet sandbox stop --dir "$PRIVATE_SANDBOX" >/dev/null 2>&1
	rm -rf "$PRIVATE_SANDBOX"
}
private_sandbox() {
	local info
	PRIVATE_SANDBOX="${CLEANUP_BINARY_DIR:-$E2E_TMP}/e2e-sb-$1"
	trap 'private_sandbox_stop; e2e_cleanup' EXIT
	"$CLEANUPCTL" --quiet sandbox start --dir "$PRIVATE_SANDBOX" >/dev/null ||
		{ echo "FAIL: cannot start the private sandbox $PRIVATE_SANDBOX"; exit 1; }
	info=$("$CLEANUPCTL" --json sandbox status --dir "$PRIVATE_SANDBOX") ||
		{ echo "FAIL: cleanupctl sandbox status --dir $PRIVATE_SANDBOX"; exit 1; }
	DB="host=$(jq -r .socket_dir <<<"$info") port=$(jq -r .port <<<"$info") dbname=cleanup_lab user=postgres"
	"$CLEANUPCTL" --quiet --db "$DB" install >/dev/null || { echo "FAIL: install into $PRIVATE_SANDBOX"; exit 1; }
	"$CLEANUPCTL" --quiet --db "$DB" seed --servers 2 --libraries 2 --items "$2" >/dev/null ||
		{ echo "FAIL: seed of $PRIVATE_SANDBOX"; exit 1; }
}

# capture NAME: when E2E_CAPTURE_DIR is set, the screen as last grabbed
# into E2E_CAPTURE_DIR/NAME.txt (the walkthroughs of docs/operator-guide.md
# are made so).
capture() {
	[ -n "${E2E_CAPTURE_DIR:-}" ] || return 0
	mkdir -p "$E2E_CAPTURE_DIR" && printf '%s\n' "$SCREEN" >"$E2E_CAPTURE_DIR/$1.txt"
}

# The demo scenarios (tests/e2e/test_demo_*.sh): `cleanupctl demo SCENARIO`
# on a terminal, followed from the console alone.

# demo_console NARRATION RATE COMMAND: starts COMMAND (a `cleanupctl demo
# SCENARIO` command line) in tmux (start_cmd; COLS and ROWS apply), waits
# for the scenario's opening NARRATION in the log and, when RATE is not
# empty, for the console's "THROTTLE RATE/s" badge (the runner's rate).
# The terminal is 90 rows unless ROWS says otherwise: the log panel (newest
# first) then shows about twenty lines, so the opening notes are still in
# view when the conductor's first lines follow them within the same second
# (at 40 rows the log shows five, and a test that looked a second late
# under load missed them).
demo_console() {
	ROWS=${ROWS:-90} start_cmd "$3"
	wait_for "$1" 30 && ok "the scenario is narrated in the log" || fail "no narration"
	[ -z "$2" ] || { wait_for "THROTTLE $2/s" && ok "the console is throttled to the runner's rate" || fail "no throttle badge"; }
}

# demo_completed JOB WHO: JOB completes (WHO ran it: "the runner", "the
# console's run"), the console narrates the completion with the job's
# counters as the database has them. Sets D K M A R X T (deleted, kept,
# moved, absent, retained, examined, total_estimate).
demo_completed() {
	wait_sql "SELECT phase FROM cleanup.jobs WHERE id = $1" completed 60 && ok "$2 completed the job" ||
		fail "not completed"
	wait_for "demo: job $1 completed at step" 15 || fail "completion not narrated"
	read -r D K M A R X T ME AE S <<<"$(sql "SELECT deleted, kept, moved, absent, retained, examined, total_estimate,
	                                              moved_early, absent_early, scope_count FROM cleanup.jobs WHERE id = $1" | tr '|' ' ')"
	wait_for "deleted $D, kept $K, moved $M, absent $A: $X examined" &&
		ok "the completion is narrated with the job's counters" || fail "narrated counters differ from $D/$K/$M/$A/$X"
}

# demo_counters_exact JOB LIBRARY ITEMS: after demo_completed, the job's
# counters against the survivors. Every item of LIBRARY at sealing (ITEMS
# of them; external IDs ext-LIBRARY-N, immutable, A4) outside the manifest
# was deleted by the job once, unless a writer had moved it out first (A3:
# it then still exists, by id and external ID, anywhere: writers never
# delete, and may have moved it back since the job ended); every row in
# scope at the seal is in exactly one counter (T7): ITEMS = deleted + kept
# + moved + absent, moved and absent counting the rows that left before a
# step reached them (moved_early, absent_early); examined = deleted + kept
# + (moved - moved_early) + (absent - absent_early) + retained (a row a
# writer held when a step came is retained, then examined again by a later
# pass, which resolves it: docs/steps.md, "retained counts retention
# events"; a writer moving rows out of the library holds them so); the steps'
# deletions add up to the
# job's (nothing counted twice, across a crash too); step numbers have no
# hole. Sets MANIFEST and ESCAPED.
demo_counters_exact() {
	local j=$1 l=$2 items=$3
	MANIFEST=$(sql "SELECT count(*) FROM cleanup.manifest WHERE job_id = $j")
	ESCAPED=$(sql "SELECT count(*) FROM inventory.items i WHERE i.external_id LIKE 'ext-$l-%'
	                 AND i.id <= (SELECT high_water_id FROM cleanup.jobs WHERE id = $j)
	                 AND NOT EXISTS (SELECT 1 FROM cleanup.manifest m WHERE m.job_id = $j AND m.external_id = i.external_id)")
	[ "$T" = "$items" ] && [ "$S" = "$items" ] && [ "$D" = $((items - MANIFEST - ESCAPED)) ] &&
		[ "$items" = $((D + K + M + A)) ] && [ "$X" = $((D + K + M - ME + A - AE + R)) ] &&
		ok "counters exact: $D deleted = $items items - $MANIFEST in the manifest - $ESCAPED moved out first; $items in scope = deleted + kept + moved ($ME before a step) + absent; examined $X" ||
		fail "counters: deleted $D kept $K moved $M ($ME early) absent $A ($AE early) retained $R examined $X of $T (scope $S); $items items, manifest $MANIFEST, moved out $ESCAPED"
	[ "$(sql "SELECT sum(deleted) FROM cleanup.job_steps WHERE job_id = $j")" = "$D" ] &&
		ok "the steps' deletions add up to the job's (nothing counted twice)" ||
		fail "steps' deletions: $(sql "SELECT sum(deleted) FROM cleanup.job_steps WHERE job_id = $j") vs $D"
	[ "$(sql "SELECT count(*) = max(step_no) AND min(step_no) = 1 FROM cleanup.job_steps WHERE job_id = $j")" = t ] &&
		ok "step numbers without a hole" || fail "step numbers"
}

# demo_quit: q quits the console, and no cleanupctl session of the demo
# (writers, runner, conductor, holder, probe) is left in this database.
demo_quit() {
	quit_console && ok "q quits" || fail "quit"
	wait_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'cleanupctl:%'" 0 15 &&
		ok "no demo process left behind" || fail "demo processes left: $(cleanupctl_backends)"
}
