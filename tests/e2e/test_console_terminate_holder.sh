#!/usr/bin/env bash
# T3: the incident path, busy step -> holder named ->
# decision. At 80x24 and 120x40:
#  - two psql sessions idle in a transaction: e2e-idle holds draining job
#    J's row FOR UPDATE (a step of J is busy, exit 3, naming it), e2e-other
#    library 4's row (no job needs it); both are listed in the locks panel
#    once idle for more than 10 s, though nobody waits for them;
#  - T opens a typed confirmation naming pid, role, application, client,
#    state, transaction age and what it holds;
#  - confirmed for e2e-other, the engine refuses (the re-check is
#    server-side) and the session lives on; audited as refused;
#  - confirmed for e2e-idle, the engine ends it; audited as done with the
#    job and what was held; J steps again.
# A --readonly console offers no T (the key does nothing, no dialog).
# Every wait polls the screen or the database.
. "$(dirname "$0")/lib.sh"

BIN=$CLEANUPCTL
db_fresh termhold 300
J=$(sealed_job 1 100)
C() { "$CLEANUPCTL" --db "$DB" "$@"; }

# idle_start NAME FD SQL: a psql (application NAME) whose transaction runs
# SQL and then stays idle in it (psql waits for its next line on a pipe
# kept open on fd FD); idle_wait waits until both sessions are idle in
# transaction for more than 10 s and sets IDLE_PID (e2e-idle: job J's row,
# which J, draining, needs) and OTHER_PID (e2e-other: library 4's row,
# which no job needs). idle_stop closes the pipes (each psql exits).
IDLE_PSQLS=()
idle_start() {
	local fifo=$E2E_TMP/$1.fifo
	rm -f "$fifo"
	mkfifo "$fifo"
	# the other session's pipe must not stay open in this one's process
	(exec 7>&- 8>&- && exec psql -X -q "$DB" <"$fifo" >/dev/null 2>&1) &
	IDLE_PSQLS+=("$!")
	eval "exec $2>\"\$fifo\""
	printf '%s\n' "SET application_name = '$1';" "BEGIN;" "$3" >&"$2"
}
idle_wait() {
	wait_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
	           AND application_name IN ('e2e-idle', 'e2e-other')
	           AND state = 'idle in transaction' AND xact_start < clock_timestamp() - interval '11 seconds'" 2 30 ||
		fail "the idle sessions did not start"
	IDLE_PID=$(sql "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'e2e-idle'")
	OTHER_PID=$(sql "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'e2e-other'")
}
idles() {
	# e2e-other first, so that its transaction is the older: the locks
	# panel lists the oldest first (g selects it, G e2e-idle)
	idle_start e2e-other 8 "SELECT 1 FROM inventory.libraries WHERE id = 4 FOR UPDATE;"
	wait_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'e2e-other'
	           AND state = 'idle in transaction'" 1 || fail "e2e-other did not start"
	idle_start e2e-idle 7 "SELECT 1 FROM cleanup.jobs WHERE id = $J FOR UPDATE;"
	idle_wait
}
idle_stop() {
	local p
	((${#IDLE_PSQLS[@]})) || return 0
	exec 7>&- 8>&-
	for p in "${IDLE_PSQLS[@]}"; do wait "$p" 2>/dev/null; done
	IDLE_PSQLS=()
}
trap 'idle_stop; e2e_cleanup' EXIT
audit_count() { sql "SELECT count(*) FROM cleanup.audit WHERE action = 'terminate-holder' AND outcome LIKE '$1%'"; }

for size in 80x24 120x40; do
	at_size "$size"
	idles
	# Busy: a step of J names the holder (exit 3).
	OUT=$(C job step "$J" 2>&1)
	rc=$?
	[ "$rc" = 3 ] && grep -q "pid $IDLE_PID" <<<"$OUT" && ok "$size: job step is busy and names pid $IDLE_PID" ||
		fail "$size: job step: exit $rc: $OUT"
	start "$BIN" 7>&- 8>&- # tmux must not keep the idle sessions' pipes open
	focus locks || fail "$size: no locks panel"
	# Both listed though nobody waits (the locks panel is 27 columns wide
	# at 80x24: rows are cut), the older first.
	wait_re "│$IDLE_PID e2e-idle idle [0-9]+(\.[0-9])?(s|m[0-9]{2}s)" 15 && seen_re "│$OTHER_PID e2e-other idle [0-9]" &&
		ok "$size: the idle-in-transaction sessions are listed, nobody waiting yet" ||
		fail "$size: idle sessions not listed"
	grep -qE "│2 idle in xact >10s, 0 bl" <<<"$SCREEN" && ok "$size: the panel's head counts them first" || fail "$size: head"
	if [ "$size" = 120x40 ]; then
		# 42 columns there: the role shows, the rest is in the dialog
		grep -qE "│$IDLE_PID e2e-idle idle [0-9.ms]+ \(role postgres" <<<"$SCREEN" &&
			ok "$size: its role" || fail "$size: role of the idle row"
	fi

	# T on the session that holds up no job: the engine refuses.
	keys g
	keys T
	wait_dialog "Terminate backend $OTHER_PID? pid $OTHER_PID (role postgres, application e2e-other, client local, idle in transaction, transaction" &&
		wait_dialog "holds RowShareLock on inventory.libraries" && wait_dialog "Type \"terminate $OTHER_PID\" to confirm" &&
		ok "$size: the dialog names pid, role, application, client, state, age, what it holds" ||
		fail "$size: dialog"
	before=$(audit_count refused)
	type_text "terminate $OTHER_PID"
	keys Enter
	wait_for "holds up no cleanup job now" 15 && ok "$size: refused: it holds up no job" || fail "$size: no refusal"
	[ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE pid = $OTHER_PID")" = 1 ] && ok "$size: that session lives on" ||
		fail "$size: a session that held up nothing was ended"
	[ "$(audit_count refused)" = $((before + 1)) ] && ok "$size: the refusal is audited" || fail "$size: audit of the refusal"

	# T on the holder of J's row: ended.
	keys G
	keys T
	wait_dialog "Terminate backend $IDLE_PID? pid $IDLE_PID (role postgres, application e2e-idle, client local, idle in transaction, transaction" &&
		wait_dialog "holds RowShareLock on cleanup.jobs" || fail "$size: second dialog"
	grab
	capture "terminate_holder_dialog_$size"
	before=$(audit_count done)
	type_text "terminate $IDLE_PID"
	keys Enter
	wait_for "done: terminated: pid $IDLE_PID" 15 && ok "$size: the holder is terminated" || fail "$size: not terminated"
	wait_sql "SELECT count(*) FROM pg_stat_activity WHERE pid = $IDLE_PID" 0 10 && ok "$size: its backend is gone" ||
		fail "$size: backend $IDLE_PID still there"
	[ "$(audit_count done)" = $((before + 1)) ] && ok "$size: audited as done" || fail "$size: audit of the termination"
	[ "$(sql "SELECT count(*) FROM cleanup.audit WHERE action = 'terminate-holder' AND job_id = $J AND outcome LIKE '%the row of job $J, which job $J waits for%'")" -ge 1 ] &&
		ok "$size: the audit row names the job and what was held" || fail "$size: audit row text"
	wait_gone "$IDLE_PID e2e-idle" 10 && ok "$size: the locks panel no longer lists it" || fail "$size: still listed"
	grab
	capture "terminate_holder_done_$size"
	quit_console || fail "$size: quit"
	idle_stop
done
OUT=$(C job step "$J" 2>&1) && ok "the job steps again once the holder is gone" || fail "job step after: $OUT"

# A read-only console: T is no key there.
COLS=80 ROWS=24
export COLS ROWS
idles
start "$BIN" --readonly 7>&- 8>&-
focus locks || fail "readonly: no locks panel"
wait_re "│$IDLE_PID e2e-idle idle" 15 || fail "readonly: idle holder not listed"
keys G
keys T
grab
grep -q "Terminate backend" <<<"$SCREEN" && fail "readonly: T opened a dialog" || ok "readonly: T offers nothing"
keys '?'
wait_re "keys 1-[0-9]+/[0-9]+" 10 || fail "readonly: help"
grep -q "terminate the holder" <<<"$SCREEN" && fail "readonly: the help lists T" || ok "readonly: the help lists no T"
[ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE pid = $IDLE_PID")" = 1 ] || fail "readonly: the holder was ended"
keys Escape
quit_console || fail "readonly: quit"
idle_stop
finish
