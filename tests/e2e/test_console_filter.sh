# Issue 11, item 13: `/` filters the jobs list (words matched in id, kind,
# target, phase), `o` sorts it (newest, phase, progress), and panel titles
# say where the selection is (1/2). One build.
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
[ "$(rows_order)" = "$J2 $J1 " ] && ok "newest first by default" || fail "default order: $(rows_order)"
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
[ "$(rows_order)" = "$J2 $J1 " ] && ok "and back to newest first" || fail "order after three o: $(rows_order)"
quit_console && ok "q quits" || fail "quit"
finish
