# The terminal side, for both builds: resize (tmux resize-window) including
# "too small", NO_COLOR (no colour codes at all, while the default theme
# has them), --readonly hiding every action, the stale marker and the
# reconnect after pg_terminate_backend of the console's connection, and the
# refusal off a TTY.
. "$(dirname "$0")/lib.sh"

colour_codes() { T capture-pane -p -e | grep -cE $'\e\\[([0-9;]*;)?(3[0-7]|9[0-7]|4[0-7]|10[0-7]|38;5;[0-9]+|48;5;[0-9]+)m'; }
coloured() { [ "$(colour_codes)" -gt 0 ]; }

for BIN in "${BINARIES[@]}"; do
	fresh_for "$BIN" term
	J=$(sealed_job 2 10)

	# Resize.
	start "$BIN"
	wait_for "server-2" || fail "$name: start"
	T resize-window -x 70 -y 20
	wait_for "terminal too small: 70x20" && ok "$name: too small is said" || fail "$name: too small"
	T resize-window -x 100 -y 30
	wait_for "server-2" && wait_gone "terminal too small" && ok "$name: back after resize" || fail "$name: resize back"
	[ "$(screen | head -1 | wc -L)" -le 100 ] || fail "$name: wider than the window"
	T resize-window -x 200 -y 50
	wait_for "lib 2 Shows" && ok "$name: wide layout" || fail "$name: wide"

	# Colours: the default theme has them...
	# (waited for: tmux can show the wide layout's text before the rest of
	# that redraw, its colours, has been read from the pane; seen under ASan)
	until_seen 10 coloured && ok "$name: colours by default" || fail "$name: no colour by default"

	# The stale marker and reconnecting. The database refuses new
	# connections (ALLOW_CONNECTIONS false, superusers included) before the
	# console's backend is terminated, so the marker stays until this test
	# lets it reconnect: it cannot come and go between two looks at the
	# screen (a reconnect takes ~250 ms). Done from the postgres database.
	dbname=${DB##*dbname=}
	dbname=${dbname%% *}
	psql -X -q "$ADMIN" -c "ALTER DATABASE $dbname ALLOW_CONNECTIONS false" \
		-c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '$dbname' AND application_name = 'cleanupctl:console'" >/dev/null
	wait_for "stale since" 10 && ok "$name: stale since shown" || fail "$name: no stale marker"
	screen | grep -q "server-2" && ok "$name: last snapshot kept" || fail "$name: snapshot lost"
	psql -X -q "$ADMIN" -c "ALTER DATABASE $dbname ALLOW_CONNECTIONS true" >/dev/null
	wait_gone "stale since" 15 && ok "$name: reconnected" || fail "$name: no reconnect"
	quit_console || fail "$name: quit"

	# ...NO_COLOR has none.
	E2E_ENV="NO_COLOR=1" start "$BIN"
	wait_for "server-2" || fail "$name: NO_COLOR start"
	[ "$(colour_codes)" -eq 0 ] && ok "$name: NO_COLOR: no colour codes" || fail "$name: NO_COLOR shows colours"
	screen | grep -q "draining" && ok "$name: NO_COLOR: phases as words" || fail "$name: phase words"
	quit_console || fail "$name: quit"

	# --readonly: no action keys, no action commands, no actions in help.
	start "$BIN" --readonly
	wait_for "READ-ONLY" || fail "$name: READ-ONLY badge"
	keys s
	keys :
	type_text "step $J"
	keys Enter
	wait_for "read-only console: step is not available" && ok "$name: readonly refuses :step" || fail "$name: readonly :step"
	keys '?'
	wait_for "refresh less / more often" || fail "$name: readonly help"
	screen | grep -q "step the selected job" && fail "$name: readonly help lists actions" || ok "$name: readonly help has no actions"
	[ "$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")" = 0 ] || fail "$name: readonly stepped"
	[ "$(sql "SELECT count(*) FROM cleanup.audit")" = 0 ] || fail "$name: readonly wrote audit rows"
	keys Escape
	quit_console || fail "$name: quit"

	# Crash signals: the terminal is restored (canonical mode, echo), then the
	# console dies of the signal.
	for sig in SEGV TERM; do
		start_cmd "'$BIN' --db '$DB' console; echo CONSOLE-EXIT=\$?; stty -a | tr ' ;' '\n\n' | grep -x -e icanon -e echo | tr '\n' ' '; echo MODES"
		wait_for "server-2" || fail "$name: start for SIG$sig"
		pid=$(pgrep -P "$(T list-panes -F '#{pane_pid}')" | head -1)
		kill -"$sig" "$pid"
		code=$([ "$sig" = SEGV ] && echo 139 || echo 143)
		wait_for "CONSOLE-EXIT=$code" 10 && wait_for "icanon echo MODES" 5 &&
			ok "$name: SIG$sig restores the terminal" || fail "$name: SIG$sig"
	done

	# Off a TTY: refuses, exit 2, points at status --json.
	"$BIN" --db "$DB" console </dev/null >"$E2E_TMP/out" 2>"$E2E_TMP/err"
	rc=$?
	[ "$rc" = 2 ] && grep -q "needs a terminal" "$E2E_TMP/err" && grep -q "status --json" "$E2E_TMP/err" &&
		ok "$name: off a TTY: exit 2 with a hint" || fail "$name: off a TTY gave $rc: $(cat "$E2E_TMP/err")"
done
finish
