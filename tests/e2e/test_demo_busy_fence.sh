# `cleanupctl demo busy-fence`,
# followed from the console alone. The demo job (a fresh library of its
# own) is appended but not sealed; a writer's transaction
# (cleanupctl:writer:holder) holds its library's admission row, left open;
# the seal answers busy (exit 3), said in the log with "press T"; the locks
# panel shows the blocking tree with the holder over the fence's lock probe
# (a session of the job); the operator ends the holder from the console (T
# on it in the locks panel, typed "terminate PID"), the log says so, and S
# seals the job: the library is fenced, the count exact. Every wait
# observes the screen or the database.
. "$(dirname "$0")/lib.sh"

db_fresh demo_bf
demo_console "demo busy-fence: job 1 prunes library 5 (" "" "'$CLEANUPCTL' --db '$DB' demo busy-fence"
J=1
L=5
# The traversal's count, as the demo appended it (writes into the library
# while it collects add protected IDs to the manifest table, not to it).
N=$(grep -oE "job 1 prunes library $L \([0-9]+ IDs appended\)" <<<"$FLAT" | grep -oE '[0-9]+ IDs' | grep -oE '[0-9]+')
[ -n "$N" ] && [ "$N" = "$(sql "SELECT manifest_count FROM cleanup.jobs WHERE id = $J")" ] ||
	fail "the narrated count \"$N\" is not the job's manifest_count"
wait_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'cleanupctl:writer:holder' AND state = 'idle in transaction'" 1 20 ||
	fail "no holder"
HPID=$(sql "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'cleanupctl:writer:holder'")
wait_for "writer backend $HPID (cleanupctl:writer:holder) holds library $L's" 15 &&
	wait_for "admission row in a transaction left open since" && ok "the holder is named in the log" ||
	fail "the holder is not narrated"
wait_for "\`cleanupctl job seal $J --expected $N\`: busy (exit 3)" 30 &&
	ok "the seal answered busy (exit 3), said in the log" || fail "the busy seal is not narrated"
wait_for "held by backend $HPID: press T to end the holder (Tab to the locks" &&
	wait_for "panel, backend $HPID selected, T, type \"terminate $HPID\")," && wait_for "or it commits 120 s after" &&
	ok "the log says how to end the holder from the console: press T" || fail "no way out said"
[ "$(sql "SELECT coalesce(expected_count::text, 'unsealed') || '/' || phase || '/' ||
            (SELECT state FROM cleanup.library_admission WHERE library_id = $L) FROM cleanup.jobs WHERE id = $J")" = "unsealed/collecting/open" ] &&
	ok "nothing sealed, the library still open" ||
	fail "after busy: $(sql "SELECT coalesce(expected_count::text, 'unsealed') || '/' || phase FROM cleanup.jobs WHERE id = $J")"
# The blocking tree: the holder at the root, the fence's probe waiting under it.
PPID_=$(sql "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'cleanupctl:fence-probe'")
wait_sql "SELECT pg_blocking_pids($PPID_)::text" "{$HPID}" 15 || fail "the probe is not blocked by the holder"
wait_re "$HPID writer holder idle in transaction" 15 && wait_re "└ $PPID_ cleanupctl:fence-probe wai" &&
	ok "the locks panel shows the blocking tree naming the holder" || fail "no blocking tree"
capture demo-busy-fence-1-busy

# The operator ends the holder from the console: T on it in the locks
# panel (its first row, selected when the panel is focused), typed.
focus locks || fail "the locks panel could not be focused"
keys T
wait_dialog "Terminate backend $HPID?" && wait_dialog "Type \"terminate $HPID\" to confirm" ||
	fail "T: no terminate-holder dialog for $HPID"
type_text "terminate $HPID"
keys Enter
wait_for "done: terminated: pid $HPID" 15 && ok "T ended the holder (typed \"terminate $HPID\")" || fail "T did not end the holder"
[ "$(sql "SELECT count(*) FROM cleanup.audit WHERE action = 'terminate-holder' AND outcome LIKE '%terminated: pid $HPID %'")" -ge 1 ] &&
	ok "the termination is audited" || fail "no terminate-holder audit row: $(sql "SELECT outcome FROM cleanup.audit WHERE action = 'terminate-holder'")"
wait_for "the holder (backend $HPID) was ended at" 15 &&
	wait_for "library $L's admission row is free: S on job $J (count $N) seals it" &&
	ok "the end of the holder is narrated" || fail "the end of the holder is not narrated"
wait_gone "└ $PPID_ job" 15 && ok "the tree is gone from the locks panel" || fail "the probe is still shown"
# S, the count, Enter. A demo writer on the same server may take the row
# for an instant (FOR SHARE NOWAIT): the seal then answers busy, and the
# operator, as told, retries (at most 3 times here).
focus jobs || fail "the jobs panel could not be focused"
sealed=no
for try in 1 2 3; do
	keys S
	wait_for "Seal job $J?" || fail "seal dialog"
	type_text "$N"
	keys Enter
	if wait_sql "SELECT expected_count || '/' || phase FROM cleanup.jobs WHERE id = $J" "$N/draining" 5; then
		sealed=yes
		break
	fi
done
[ "$sealed" = yes ] && ok "S sealed the job once the holder was gone" || fail "not sealed"
[ "$(sql "SELECT state FROM cleanup.library_admission WHERE library_id = $L")" = draining ] &&
	ok "the library is fenced" || fail "library not fenced"
[ "$(sql "SELECT manifest_count = $N AND expected_count = $N
                   AND (SELECT count(*) FROM cleanup.manifest m WHERE m.job_id = $J) >= $N FROM cleanup.jobs WHERE id = $J")" = t ] &&
	ok "the count is exact: expected = manifest = $N (count(*) of the manifest: $(sql "SELECT count(*) FROM cleanup.manifest WHERE job_id = $J"), with the protected IDs)" ||
	fail "counts differ: $(sql "SELECT manifest_count || '/' || coalesce(expected_count::text, '-') FROM cleanup.jobs WHERE id = $J")"
wait_re "audit +seal by [^ ]+ \(typed '$N'\)" 15 && ok "the seal is audited in the log" || fail "seal not in the log"
capture demo-busy-fence-2-sealed
demo_quit

# Off a terminal: the narration and status, exit 0, a new unsealed job, no holder.
"$CLEANUPCTL" --db "$DB" demo busy-fence </dev/null >"$E2E_TMP/out" 2>"$E2E_TMP/err"
rc=$?
[ "$rc" = 0 ] && grep -qE "demo busy-fence: job 2 prunes library 6 \(" "$E2E_TMP/err" &&
	[ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'cleanupctl:writer:holder'")" = 0 ] &&
	ok "demo busy-fence off a terminal: narration and status, no holder" ||
	fail "off a terminal: $rc $(cat "$E2E_TMP/err")"
finish
