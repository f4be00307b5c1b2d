#!/usr/bin/env bash
# Stale panels are dimmed, and an action on stale data
# asks first. At 80x24 and 120x40, with cleanup.library_stats locked by
# another session (lib.sh locker_start: the servers and libraries refresh
# queries time out):
#  - the servers and libraries panels say ~stale and their rows are drawn
#    dim (SGR 2 in tmux's capture with attributes); the jobs panel is not;
#  - D on a library asks "The data on screen is STALE: ... [y/N]" before
#    the removal's own dialog: n drops it (nothing created), y goes on to
#    the typed removal dialog (Esc there: nothing created);
#  - once the lock goes, D opens the removal dialog at once.
# Every wait polls the screen or pg_locks (lib.sh).
. "$(dirname "$0")/lib.sh"

db_fresh stale
jobs_count() { sql "SELECT count(*) FROM cleanup.jobs"; }
# dim_row TEXT: a row of the pane holding TEXT is drawn with SGR 2 (dim).
dim_row() { T capture-pane -p -e | grep -F -- "$1" | grep -qE $'\e\\[([0-9]+;)*2(;[0-9]+)*m'; }
# Waited for, both ways: tmux can show a redraw's title before its rows.
bright_row() { ! dim_row "$1"; }

for size in 80x24 120x40; do
	at_size "$size"
	start "$CLEANUPCTL"
	wait_re "│ +1 +1 Movies +open +300" && ok "$size: libraries shown" || fail "$size: libraries not shown"
	dim_row "Movies" && fail "$size: fresh rows drawn dim"
	locker_start
	wait_re "libraries 1/4 ~stale" 20 && wait_re "servers 1/2 ~stale" && ok "$size: the panels say ~stale" ||
		fail "$size: panel titles"
	until_seen 10 dim_row "Shows" && ok "$size: their rows are dim" || fail "$size: stale rows not dim"
	grep -q "jobs.*~stale" <<<"$SCREEN" && fail "$size: the jobs panel is marked stale"

	# lib.sh's focus wants "[libraries 1/4]": here the title says ~stale
	for i in 1 2 3 4 5 6 7; do
		wait_re "\[libraries [0-9]+/[0-9]+ ~stale\]" 1 >/dev/null && break
		keys Tab
	done
	seen_re "\[libraries [0-9]+/[0-9]+ ~stale\]" || fail "$size: no libraries focus"
	keys g
	keys D
	wait_dialog "The data on screen is STALE: the servers and libraries panels did not refresh" &&
		wait_dialog "Go on to the remove-library of 1 \"Movies\" anyway? [y/N]" &&
		ok "$size: D on stale data asks first" || fail "$size: no stale question"
	capture "stale_question_$size"
	keys n
	wait_for "remove-library not done: the data was stale" && ok "$size: n drops it" || fail "$size: n"
	keys D
	wait_dialog "anyway? [y/N]" || fail "$size: second stale question"
	keys y
	wait_dialog "Create a remove-library job for library 1 \"Movies\"?" && ok "$size: y goes on to the removal's dialog" ||
		fail "$size: no removal dialog after y"
	keys Escape
	wait_for "not done" || fail "$size: Esc"
	[ "$(jobs_count)" = 0 ] && ok "$size: nothing created" || fail "$size: a job was created"

	locker_stop
	wait_gone "~stale" 20 && ok "$size: fresh again" || fail "$size: still stale"
	until_seen 10 bright_row "Shows" || fail "$size: fresh rows still dim"
	keys D
	wait_dialog "Create a remove-library job for library 1 \"Movies\"?" && ok "$size: fresh data: the dialog at once" ||
		fail "$size: fresh D"
	grep -q "STALE" <<<"$SCREEN" && fail "$size: asked about stale data on fresh data"
	keys Escape
	wait_for "not done" || fail "$size: Esc"
	quit_console || fail "$size: quit"
done
finish
