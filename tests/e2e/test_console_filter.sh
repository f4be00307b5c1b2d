# `/` filters the jobs list (words matched in id, kind,
# target, phase), `o` sorts it (unfinished first by default, phase,
# progress, newest), and panel titles
# say where the selection is (1/2); the same keys filter and sort the
# libraries list when it has the focus; the job detail's step history
# scrolls back to the first step (read from the database page by page).
# One build.
. "$(dirname "$0")/lib.sh"

BIN=$CLEANUPCTL
db_fresh filter
J1=$(sealed_job 1 100)                                                           # lib 1 Movies, draining
J2=$("$CLEANUPCTL" --json --db "$DB" job create prune --library 4 | jq -r .id) # lib 4 Shows, collecting
start "$BIN"
wait_re " +$J2 prune +lib 4 Shows +collecting" || fail "jobs not shown"
# rows_order: the job ids of the jobs panel's rows, top to bottom
rows_order() { grep -oE "^│[> ] +[0-9]+ prune" <<<"$SCREEN" | grep -oE "[0-9]+" | tr '\n' ' '; }
grab
[ "$(rows_order)" = "$J2 $J1 " ] && ok "unfinished, newest first by default" || fail "default order: $(rows_order)"
wait_re "\[jobs [12]/2\]" && ok "the title says where the selection is" || fail "no position in the title: $(sed -n '/jobs/p' <<<"$SCREEN" | head -1)"

keys /
type_text "shows"
wait_for "[jobs /shows_ 1/1]" && ok "the title shows the filter while it is typed" || fail "filter title"
keys Enter
wait_for "[jobs /shows 1/1]" || fail "filter kept after Enter"
grab
[ "$(rows_order)" = "$J2 " ] && ok "/shows lists only job $J2" || fail "filtered rows: $(rows_order)"
keys /
type_text "x"
wait_for "no job matches \"showsx\"" && ok "an empty result says so" || fail "no-match text"
keys Escape
wait_re " +$J1 prune +lib 1 Movies +draining" && ok "Esc in the filter clears it" || fail "Esc"

keys o
wait_for "jobs sorted by phase" && wait_for "[jobs by phase" || fail "o: sort by phase"
grab
[ "$(rows_order)" = "$J1 $J2 " ] && ok "o sorts by phase (draining before collecting)" || fail "phase order: $(rows_order)"
keys o
wait_for "jobs sorted by progress" || fail "o: progress"
keys o
wait_for "jobs sorted by newest" || fail "o: back to newest"
grab
[ "$(rows_order)" = "$J2 $J1 " ] && ok "and newest first" || fail "order after three o: $(rows_order)"
keys o
wait_for "jobs sorted by unfinished" && wait_re "\[jobs [12]/2\]" && ok "a fourth o: back to the default (unfinished first)" ||
	fail "o: back to unfinished"

# The libraries list: Shift-Tab from the jobs, then / and o there.
keys BTab
wait_re "\[libraries [0-9]+/4\]" && ok "the libraries panel has the focus and its position" || fail "libraries focus"
keys /
type_text "4 shows"
wait_for "[libraries /4 shows_ 1/1]" && ok "/ filters the libraries when they have the focus" || fail "libraries filter title"
keys Enter
wait_for "[libraries /4 shows 1/1]" || fail "libraries filter kept"
grab
grep -qE "│ +2 +4 Shows +open" <<<"$SCREEN" && ! grep -qE "│ +1 +1 Movies +open" <<<"$SCREEN" &&
	ok "/4 shows lists only library 4" || fail "filtered libraries: $(grep -E 'Movies|Shows' <<<"$SCREEN")"
keys /
keys Escape
wait_for "[libraries 1/4]" && ok "Esc clears the libraries filter" || fail "libraries filter not cleared"
keys o
wait_for "libraries sorted by name" && wait_for "[libraries by name" && ok "o sorts the libraries" || fail "libraries sort"
grab
lib_names() { grep -oE "│ +[0-9]+ +[0-9]+ [A-Za-z-]+ +open" <<<"$SCREEN" | awk '{print $4}' | tr '\n' ' '; }
[ -n "$(lib_names)" ] && [ "$(lib_names)" = "$(lib_names | tr ' ' '\n' | sed '/^$/d' | sort -f | tr '\n' ' ')" ] &&
	ok "by name: $(lib_names)" || fail "libraries not by name: $(lib_names)"
[ "$(grep -c "counter" <<<"$SCREEN")" -ge 4 ] && ok "unwatched libraries say counter" || fail "count words"

# The step history from the first step: a job with 300 step records.
SRV=$(sql "INSERT INTO inventory.media_servers (name) VALUES ('history') RETURNING id" | head -1)
LIB=$(sql "INSERT INTO inventory.libraries (server_id, name) VALUES ($SRV, 'History') RETURNING id" | head -1)
J3=$(sql "SELECT id FROM cleanup.job_create('prune', $LIB)")
sql "INSERT INTO cleanup.job_steps (job_id, step_no, action, pass_no, library_id, cursor_from, cursor_to, examined,
       visited, deleted, kept, phase_after, started_at, duration_ms, lock_hold_ms)
     SELECT $J3, g, CASE WHEN g = 1 THEN 'first' ELSE 'drain' END, 1, $LIB, (g - 1) * 128, g * 128, 1, 0, 0, 1,
            'draining', clock_timestamp() - interval '1 hour' + g * interval '1 s', 1, 1
       FROM generate_series(1, 300) g" >/dev/null
sql "UPDATE cleanup.jobs SET step_no = 300 WHERE id = $J3" >/dev/null
keys Tab
keys /
type_text "History"
keys Enter
wait_for "[jobs /History 1/1]" || fail "history job not listed"
keys Enter
wait_for "[job $J3 detail 1/300]" 15 && ok "the detail lists all 300 steps" || fail "detail position"
wait_re "^│ +300 drain" && ok "newest step first" || fail "step 300 not shown"
keys G
wait_for "[job $J3 detail 300/300]" && ok "G goes to the oldest step" || fail "G in the detail"
wait_re "^│ +1 first" 15 && ok "step 1 read from the database and shown" || fail "step 1 not shown"
grab
grep -qE "^│ +2 drain .* $LIB: 128 > 256" <<<"$SCREEN" && ok "with its cursor" || fail "cursor column: $(grep -E '^│ +2 drain' <<<"$SCREEN")"
keys g
wait_re "^│ +300 drain" 15 && ok "g back to the newest" || fail "g in the detail"
sql "SELECT cleanup.job_transition($J3, 'cancel')" >/dev/null
quit_console && ok "q quits" || fail "quit"
finish
