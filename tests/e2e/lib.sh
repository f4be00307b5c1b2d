# Helpers for the console's end-to-end tests (sourced, not run): a fresh
# database in the test sandbox, the real binary started in tmux on a
# private socket, keys sent with send-keys, and the screen observed with
# capture-pane. Waiting for screen content polls capture-pane for the
# expected text with a timeout: that is observing, not sleeping as
# synchronisation.
: "${CLEANUPCTL:?run through ctest}" "${CLEANUPCTL_NORL:?run through ctest}" "${CLEANUP_TEST_SANDBOX:?run through ctest}"
set -uo pipefail

info=$("$CLEANUPCTL" --json sandbox status --dir "$CLEANUP_TEST_SANDBOX")
SOCK=$(jq -r .socket_dir <<<"$info")
PORT=$(jq -r .port <<<"$info")
ADMIN="host=$SOCK port=$PORT dbname=postgres user=postgres"
FAILS=0
E2E_TMP=$(mktemp -d /tmp/cleanupctl-e2e.XXXXXX)
# One tmux server per console started (a fresh socket each time: a server
# being killed can still accept a new-session and then exit under it).
TMUX_N=0
TMUX_SOCKET="cleanupctl-e2e-$$-0"
T() { tmux -L "$TMUX_SOCKET" "$@"; }
e2e_cleanup() {
	T kill-server 2>/dev/null
	rm -rf "$E2E_TMP"
}
trap e2e_cleanup EXIT

# The binaries under test: readline and the built-in line editor.
BINARIES=("$CLEANUPCTL" "$CLEANUPCTL_NORL")
bin_name() { case "$1" in "$CLEANUPCTL_NORL") echo builtin ;; *) echo readline ;; esac; }

fail() {
	echo "FAIL: $*"
	FAILS=$((FAILS + 1))
}
ok() { echo "ok: $*"; }

# db_fresh NAME: drops and creates database cleanup_lab_e2e_NAME, installs
# the schema, seeds 2 servers x 2 libraries x 300 items; sets $DB.
db_fresh() {
	local name="cleanup_lab_e2e_$1"
	psql -X -q "$ADMIN" -c "DROP DATABASE IF EXISTS $name WITH (FORCE)" -c "CREATE DATABASE $name" 2>/dev/null
	DB="host=$SOCK port=$PORT dbname=$name user=postgres"
	"$CLEANUPCTL" --quiet --db "$DB" install >/dev/null || { echo "install into $name failed"; exit 1; }
	"$CLEANUPCTL" --quiet --db "$DB" seed --servers 2 --libraries 2 --items 300 >/dev/null || { echo "seed failed"; exit 1; }
}

# sql QUERY: one value from $DB.
sql() { psql -X -q -t -A "$DB" -c "$1"; }

# sealed_job LIBRARY KEEP: a prune job on LIBRARY whose manifest holds the
# first KEEP external IDs, sealed; prints its id.
sealed_job() {
	local id
	id=$("$CLEANUPCTL" --json --db "$DB" job create prune --library "$1" | jq -r .id)
	seq 1 "$2" | sed "s/^/ext-$1-/" | "$CLEANUPCTL" --quiet --db "$DB" job append "$id" >/dev/null
	"$CLEANUPCTL" --quiet --db "$DB" job seal "$id" --expected "$2" >/dev/null
	echo "$id"
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
		 '$bin' --db '$DB' console $* ; echo CONSOLE-EXIT=\$?; sleep 600"
}

# start_cmd COMMAND: like start, for any shell command line.
start_cmd() {
	T kill-server 2>/dev/null
	TMUX_N=$((TMUX_N + 1))
	TMUX_SOCKET="cleanupctl-e2e-$$-$TMUX_N"
	T -f /dev/null new-session -d -x "${COLS:-120}" -y "${ROWS:-40}" \
		"env LANG=C.UTF-8 XDG_STATE_HOME='$E2E_TMP/state' XDG_CONFIG_HOME='$E2E_TMP/config' $1 ; echo CONSOLE-EXIT=\$?; sleep 600"
}

screen() { T capture-pane -p; }

# flat: the screen as one line (a message wrapped over two rows matches).
flat() { screen | tr '\n' ' '; }

# wait_for TEXT [SECONDS]: until the screen shows TEXT (fixed string; may
# be wrapped over rows).
wait_for() {
	local text=$1 limit=${2:-10} i=0
	while [ "$i" -lt $((limit * 20)) ]; do
		if screen | grep -qF -- "$text" || flat | grep -qF -- "$text"; then
			return 0
		fi
		sleep 0.05
		i=$((i + 1))
	done
	echo "--- screen (waited ${limit}s for \"$text\") ---"
	screen
	echo "---"
	return 1
}

# wait_re REGEX [SECONDS]: until a row of the screen matches REGEX (ERE).
wait_re() {
	local re=$1 limit=${2:-10} i=0
	while [ "$i" -lt $((limit * 20)) ]; do
		if screen | grep -qE -- "$re"; then
			return 0
		fi
		sleep 0.05
		i=$((i + 1))
	done
	echo "--- screen (waited ${limit}s for /$re/) ---"
	screen
	echo "---"
	return 1
}

# wait_gone TEXT [SECONDS]: until the screen no longer shows TEXT.
wait_gone() {
	local text=$1 limit=${2:-10} i=0
	while [ "$i" -lt $((limit * 20)) ]; do
		if ! screen | grep -qF -- "$text"; then
			return 0
		fi
		sleep 0.05
		i=$((i + 1))
	done
	echo "--- screen (waited ${limit}s for \"$text\" to go) ---"
	screen
	return 1
}

# wait_sql QUERY EXPECTED [SECONDS]: until QUERY returns EXPECTED.
wait_sql() {
	local limit=${3:-10} i=0 v=""
	while [ "$i" -lt $((limit * 20)) ]; do
		v=$(sql "$1")
		[ "$v" = "$2" ] && return 0
		sleep 0.05
		i=$((i + 1))
	done
	echo "wait_sql: \"$1\" gave \"$v\", expected \"$2\""
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
