# Actions through their confirmations, for both builds: the first deleting
# step needs the job id typed (a wrong id does nothing), later steps ask y/N
# with No as default, cancelling a draining job is refused with the
# engine's explanation, the command line (:step N, Tab completion, :preview)
# works, a removal with the wrong name typed does nothing; every outcome is
# in cleanup.audit with the console's application_name.
. "$(dirname "$0")/lib.sh"

for BIN in "${BINARIES[@]}"; do
	fresh_for "$BIN" act
	J=$(sealed_job 1 100)
	start "$BIN"
	wait_for "draining" || fail "$name: job not shown"

	# The first step: a typed phrase naming kind and target.
	# The job id alone, or a wrong phrase, does nothing.
	keys s
	wait_dialog "Type \"prune 1 Movies\"" || fail "$name: no typed confirmation for the first step"
	type_text "999"
	keys Enter
	wait_for "not confirmed: typed \"999\"" && ok "$name: wrong phrase refused" || fail "$name: wrong phrase"
	[ "$(sql "SELECT step_no || '/' || deleted FROM cleanup.jobs WHERE id = $J")" = "0/0" ] &&
		ok "$name: nothing was stepped" || fail "$name: the wrong confirmation changed the job"
	wait_sql "SELECT count(*) FROM cleanup.audit WHERE action = 'step' AND confirmation = '999' AND outcome LIKE 'not confirmed%'" 1 &&
		ok "$name: the refusal is audited" || fail "$name: refusal not audited"

	keys s
	wait_dialog "Type \"prune 1 Movies\"" || fail "$name: dialog"
	type_text "$J"
	keys Enter
	wait_for "not confirmed: typed \"$J\"" && ok "$name: the job id alone is refused" || fail "$name: job id alone"
	[ "$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")" = 0 ] || fail "$name: the job id alone stepped"
	keys s
	wait_dialog "Type \"prune 1 Movies\"" || fail "$name: dialog"
	type_text "prune 1 Movies"
	keys Enter
	wait_sql "SELECT step_no FROM cleanup.jobs WHERE id = $J" 1 && ok "$name: step through the typed confirmation" ||
		fail "$name: step did not happen"
	wait_for "step 1 (drain)" && ok "$name: outcome shown" || fail "$name: outcome"
	wait_sql "SELECT count(*) FROM cleanup.audit WHERE action = 'step' AND job_id = $J AND confirmation = 'prune 1 Movies' AND application_name = 'cleanupctl:job:$J:console'" 1 &&
		ok "$name: audit row with application_name" || fail "$name: audit row"

	# Later steps: y/N, No by default.
	keys s
	wait_for "[y/N]" || fail "$name: y/N dialog"
	keys Enter
	wait_for "step not done: declined" && ok "$name: Enter declines" || fail "$name: Enter"
	[ "$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")" = 1 ] || fail "$name: declined step ran"

	# Cancel of a draining job: refused, with the engine's explanation.
	keys x
	wait_for "deletion has started (" && wait_for "rows gone: " && wait_for "), so recovery resumes forward" && ok "$name: cancel refused with the explanation" ||
		fail "$name: cancel explanation"
	[ "$(sql "SELECT phase FROM cleanup.jobs WHERE id = $J")" = draining ] || fail "$name: cancel changed the phase"
	wait_sql "SELECT count(*) FROM cleanup.audit WHERE action = 'cancel' AND outcome LIKE '%refused%deletion has started%'" 1 ||
		fail "$name: refusal not audited"

	# The command line, with Tab completion.
	keys :
	type_text "ste"
	keys Tab
	wait_for ":step " && ok "$name: Tab completes the command" || fail "$name: completion"
	type_text "$J"
	keys Enter
	wait_for "[y/N]" || fail "$name: :step asks"
	keys y
	wait_sql "SELECT step_no FROM cleanup.jobs WHERE id = $J" 2 && ok "$name: :step $J stepped" || fail "$name: :step"
	# Step 2 ended the drain: the job is finalizing. A dialog or command is
	# bound to the phase the screen showed, so wait until the screen shows
	# the new one (else the preview is refused as "moved on", as it must be).
	wait_for "finalizing" || fail "$name: the console did not show the job finalizing"

	keys :
	type_text "preview $J"
	keys Enter
	wait_for "preview of job $J step 3" && ok "$name: :preview shows the next step" || fail "$name: preview"
	[ "$(sql "SELECT step_no FROM cleanup.jobs WHERE id = $J")" = 2 ] || fail "$name: preview changed the job"

	keys :
	type_text "step abc"
	keys Enter
	wait_for "step: job id must be an integer from 1 to 9223372036854775807, not \"abc\"" &&
		ok "$name: bad argument explained in the CLI's words" || fail "$name: bad argument"
	# the CLI's id rule: "+5" is refused as `cleanupctl job step +5` refuses it
	keys :
	type_text "pause +$J"
	keys Enter
	wait_for "pause: job id must be an integer from 1 to 9223372036854775807, not \"+$J\": digits only: no sign" &&
		ok "$name: +N refused as the CLI refuses it" || fail "$name: +N accepted"

	# Remove a library: the wrong name does nothing, the right one creates the job.
	keys BTab
	keys j j
	keys D
	wait_dialog "Type \"remove-library 3 Movies\"" || fail "$name: removal dialog"
	screen | grep -q 'library 3 "Movies"' || fail "$name: dialog names another library"
	wait_for "(300 items now)" && ok "$name: the removal dialog says how many items go" || fail "$name: item count"
	type_text "Movies"
	keys Enter
	wait_for "not confirmed: typed \"Movies\"" || fail "$name: the bare (ambiguous) name was not refused"
	[ "$(sql "SELECT count(*) FROM cleanup.jobs WHERE kind = 'remove-library'")" = 0 ] &&
		[ "$(sql "SELECT state FROM cleanup.library_admission WHERE library_id = 3")" = open ] &&
		ok "$name: wrong name does nothing" || fail "$name: wrong name changed something"
	keys D
	wait_dialog "Type \"remove-library 3 Movies\"" || fail "$name: removal dialog"
	type_text "remove-library 3 Movies"
	keys Enter
	wait_sql "SELECT count(*) FROM cleanup.jobs WHERE kind = 'remove-library' AND library_id = 3" 1 &&
		[ "$(sql "SELECT state FROM cleanup.library_admission WHERE library_id = 3")" = draining ] &&
		ok "$name: the right name creates the remove-library job" || fail "$name: removal"

	# Run to completion: a typed confirmation, then the engine steps until done.
	keys :
	type_text "run $J"
	keys Enter
	wait_dialog "Type \"prune 1 Movies\"" || fail "$name: run dialog"
	type_text "prune 1 Movies"
	keys Enter
	wait_sql "SELECT phase FROM cleanup.jobs WHERE id = $J" completed 60 && ok "$name: run completed the job" ||
		fail "$name: run"
	wait_for "run of job $J completed" 10 && ok "$name: run outcome shown" || fail "$name: run outcome"
	[ "$(sql "SELECT count(*) FROM cleanup.audit WHERE action = 'run' AND job_id = $J")" = 2 ] &&
		ok "$name: run start and end audited" || fail "$name: run audit"
	[ "$(sql "SELECT count(*) FROM inventory.items WHERE library_id = 1")" = 100 ] &&
		ok "$name: exactly the unseen items are gone" || fail "$name: wrong items deleted"

	quit_console || fail "$name: quit"
done
finish
