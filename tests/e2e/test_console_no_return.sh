# The dialogs say where the point of no
# return is, and a cancel the engine refuses shows the refusal in full.
#  - x on a sealed (draining) job that has deleted nothing asks y/N, saying
#    nothing is deleted yet, the library reopens, and that the job is
#    cancellable until its first step deletes a row; y cancels it and the
#    library admits writes again;
#  - after the first step deleted rows, x asks nothing: the engine's
#    refusal (how many rows are gone, recovery only forward, the hint) is
#    shown whole in the footer, at 80x24 and 120x40;
#  - the D (remove-library) and S (seal) dialogs say where the point of no
#    return is.
. "$(dirname "$0")/lib.sh"

BIN=$CLEANUPCTL
WHERE="The job can be cancelled (x) until its first step deletes a row; after that it only goes forward."
db_fresh noreturn
J1=$(sealed_job 1 100)

COLS=80 ROWS=24
export COLS ROWS
start "$BIN"
wait_re "$J1 +prune +lib 1 Movies +draining" || fail "job not shown"

# Before the first deletion: cancellable, and the dialog says until when.
keys x
wait_dialog "Cancel job $J1 (prune, draining)? Nothing has been deleted yet: the job ends and library 1 admits writes again." &&
	wait_dialog "$WHERE" && wait_dialog "[y/N]" &&
	ok "x on a sealed job with nothing deleted asks, saying until when it can be cancelled" ||
	fail "cancel dialog of a draining job: $DIALOG"
keys y
wait_sql "SELECT phase FROM cleanup.jobs WHERE id = $J1" cancelled && ok "y cancels the draining job" || fail "not cancelled"
[ "$(sql "SELECT state FROM cleanup.library_admission WHERE library_id = 1")" = open ] &&
	ok "library 1 admits writes again" || fail "admission of library 1: $(sql "SELECT state FROM cleanup.library_admission WHERE library_id = 1")"
wait_re "$J1 +prune +lib 1 Movies +cancelled" || fail "the console does not show job $J1 cancelled"

# After the first deletion: no dialog, the refusal in full.
J2=$(sealed_job 1 100)
keys :
type_text "step $J2"
keys Enter
wait_dialog "This is the point of no return" && ok "the first step's dialog says it is the point of no return" ||
	fail "first step dialog: $DIALOG"
type_text "prune 1 Movies"
keys Enter
wait_sql "SELECT step_no FROM cleanup.jobs WHERE id = $J2" 1 || fail "step of $J2"
D=$(sql "SELECT deleted FROM cleanup.jobs WHERE id = $J2")
[ "$D" -gt 0 ] || fail "the first step deleted nothing"
REFUSAL="cancel job $J2: refused: cannot cancel job $J2 (prune of library 1 'Movies', phase draining): deletion has started ($D rows gone: $D items, 0 dependent records, 0 parents), so recovery resumes forward — hint: finish it with: cleanupctl job run $J2"
for size in 80x24 120x40; do
	COLS=${size%x*}
	ROWS=${size#*x}
	if [ "$size" = 120x40 ]; then
		start "$BIN"
		wait_re "$J2 +prune +lib 1 Movies +draining" || fail "$size: job not shown"
	fi
	wait_re "$J2 +prune +lib 1 Movies +draining +1 " || fail "$size: the console does not show step 1"
	keys :
	type_text "cancel $J2"
	keys Enter
	wait_for "$REFUSAL" && ok "$size: the engine's refusal is shown in full" || fail "$size: refusal not in full"
	gone_text "[y/N]" || fail "$size: a dialog for a cancel the engine refuses"
	capture "cancel_refused_$size"
done
[ "$(sql "SELECT phase FROM cleanup.jobs WHERE id = $J2")" = draining ] || fail "the refused cancel changed the job"

# D: the removal dialog says where the point of no return is.
keys BTab
wait_re "\[libraries [0-9]+/4\]" || fail "libraries focus"
keys j j
keys D
wait_dialog "Create a remove-library job for library 3" && wait_dialog "$WHERE" &&
	ok "the D dialog says until when the removal can be cancelled" || fail "D dialog: $DIALOG"
keys Escape
wait_for "remove-library not done: declined" || fail "Esc on D"

# S: the seal dialog too.
J3=$("$CLEANUPCTL" --json --db "$DB" job create prune --library 4 | jq -r .id)
keys :
type_text "show $J3"
keys Enter
wait_for "job $J3 detail" || fail "show $J3"
keys S
wait_dialog "Seal job $J3?" && wait_dialog "$WHERE" && ok "the S dialog says until when the job can be cancelled" ||
	fail "S dialog: $DIALOG"
keys Escape
wait_for "seal not done: declined" || fail "Esc on S"
[ "$(sql "SELECT phase FROM cleanup.jobs WHERE id = $J3")" = collecting ] || fail "Esc sealed the job"
quit_console && ok "q quits" || fail "quit"
finish
