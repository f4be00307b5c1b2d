# The log is a tool.
#  - 300 busy retries of one job (more than the log's 100 lines) neither
#    push out the job's lifecycle events nor the audit rows: they are
#    loaded apart, and collapse into one line "busy x300 since HH:MM:SS,
#    held by pid 4411 ...";
#  - f shows one kind only (lifecycle, audit, busy, console), then all
#    again; the title says which;
#  - / with the log focused searches it; Esc in the search clears it;
#  - Enter opens the selected line whole (what the panel cuts), any key
#    closes it.
# At 120x40 and 80x24 (the log panel has two rows there). The busy
# retries are written with cleanup.log_event, as a runner's busy answers
# are (cleanup.job_note_busy), so that their number is exact.
. "$(dirname "$0")/lib.sh"

BIN=$CLEANUPCTL
db_fresh log
J1=$(sealed_job 1 100)
J2=$("$CLEANUPCTL" --json --db "$DB" job create prune --library 4 | jq -r .id)
sql "SELECT cleanup.audit_record('e2e-ops', 'pause', $J2, 'y', 'paused job $J2 for the log test')" >/dev/null
sql "SELECT cleanup.log_event($J1, 'busy',
       format('busy: could not obtain lock on row in relation \"jobs\"; held by pid 4411 (role postgres, application psql, client local, idle in transaction, transaction %s s old) holds the job row TAIL-%s', g, g))
       FROM generate_series(1, 300) g" >/dev/null
FIRST=$(sql "SELECT to_char(min(at), 'HH24:MI:SS') FROM cleanup.events WHERE kind = 'busy'")

# f_shows TITLE CHECK TEXT WHAT KIND: f moves the log's filter on; its title
# then matches TITLE (a regular expression) and CHECK TEXT holds (wait_re,
# wait_for or gone_text): the log shows WHAT, the KIND filter's lines.
f_shows() {
	keys f
	wait_re "$1" && "$2" "$3" && ok "$size: f: $4" || fail "$size: $5 filter"
}

for size in 120x40 80x24; do
	at_size "$size"
	start "$BIN"
	focus log || fail "$size: the log cannot have the focus"
	wait_re "busy +job $J1 busy x300 since $FIRST, held by pid 4411" &&
		ok "$size: 300 busy retries collapse into one line with the holder" || fail "$size: no collapsed busy line"
	if [ "$size" = 120x40 ]; then
		wait_re "sealed +job $J1 sealed job $J1" && wait_re "created +job $J1 created job $J1" &&
			wait_re "audit +pause by e2e-ops \(typed 'y'\): paused job $J2" &&
			ok "$size: lifecycle events and the audit row are still in the log" ||
			fail "$size: the busy retries pushed other lines out"
	fi

	# f: one kind at a time.
	keys f
	wait_for "log: lifecycle lines only" && wait_re "\[log lifecycle only [0-9]+/[0-9]+\]" || fail "$size: f: lifecycle"
	wait_gone "busy x300" && wait_re "sealed +job $J1 sealed job $J1" &&
		ok "$size: f: lifecycle lines only, no busy line" || fail "$size: lifecycle filter"
	f_shows "\[log audit only 1/1\]" wait_re "audit +pause by e2e-ops" "the audit row only" audit
	f_shows "\[log busy only 1/1\]" wait_for "busy x300" "the busy retries only, collapsed" busy
	f_shows "\[log console only" gone_text "busy x300" "the console's notes only" console
	keys f
	wait_for "log: every kind of line" && wait_re "\[log [0-9]+/[0-9]+\]" && ok "$size: f again: every kind" ||
		fail "$size: back to all"

	# /: search.
	keys /
	type_text "SEALED job"
	wait_re "\[log /SEALED job_ 1/1\]" || fail "$size: search title while typing"
	keys Enter
	wait_re "\[log /SEALED job 1/1\]" && wait_re "sealed +job $J1 sealed job $J1" && gone_text "busy x300" &&
		ok "$size: / searches the log (words, any case)" || fail "$size: search"
	keys /
	type_text "x"
	wait_for "(no line matches \"SEALED jobx\"" && ok "$size: an empty result says so" || fail "$size: empty search result"
	keys Escape
	wait_re "\[log [0-9]+/[0-9]+\]" && wait_for "busy x300" && ok "$size: Esc clears the search" || fail "$size: Esc"

	# Enter: the busy line whole (its end is cut in the panel).
	keys g
	wait_re "\[log 1/[0-9]+\]" || fail "$size: g"
	gone_text "TAIL-300" || fail "$size: the panel was expected to cut the line"
	keys Enter
	wait_for "300 busy retries of job $J1 from $FIRST to" && wait_for "holds the job row TAIL-300" &&
		wait_for "any key closes" && ok "$size: Enter opens the line whole" || fail "$size: Enter on the log line"
	capture "log_open_$size"
	keys j
	wait_gone "any key closes" && ok "$size: a key closes it" || fail "$size: the box stays"
	wait_re "\[log 1/[0-9]+\]" || fail "$size: the key that closed the box also moved the selection"
	quit_console || fail "$size: quit"
done
finish
