# Issue 11, item 14: `cleanupctl demo writer-storm`, followed from the
# console alone. The demo job (sealed, its library fenced) is run two steps
# a second while two writers write 100 times a second each on its server:
# the locks panel counts their rejections and busy retries, the log keeps
# the engine's events among them (the job's creation and seal), the
# completion is narrated with counters that match the database (count(*)).
# Every wait observes the screen or the database.
. "$(dirname "$0")/lib.sh"

# 2 x 2 libraries of 3,000 items: the job takes about 9 s at 2 steps a
# second, thousands of rejected writes.
psql -X -q "$ADMIN" -c "DROP DATABASE IF EXISTS cleanup_lab_e2e_demo_ws WITH (FORCE)" \
	-c "CREATE DATABASE cleanup_lab_e2e_demo_ws" 2>/dev/null
DB="host=$SOCK port=$PORT dbname=cleanup_lab_e2e_demo_ws user=postgres"
"$CLEANUPCTL" --quiet --db "$DB" install >/dev/null || { echo "FAIL: install"; exit 1; }
"$CLEANUPCTL" --quiet --db "$DB" seed --servers 2 --libraries 2 --items 3000 >/dev/null || { echo "FAIL: seed"; exit 1; }
ITEMS=$(sql "SELECT count(*) FROM inventory.items WHERE library_id = 1")
ROWS=70 start_cmd "'$CLEANUPCTL' --db '$DB' demo writer-storm"
wait_for "demo writer-storm: job 1 drains library 1" 30 && ok "the scenario is narrated in the log" ||
	fail "no narration"
J=1
wait_for "THROTTLE 2/s" && ok "the console is throttled to the runner's rate" || fail "no throttle badge"
wait_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'cleanupctl:writer:1'" 2 15 &&
	ok "two writers on the job's server" || fail "writers"
# The storm: rejections counted in the locks panel, per writer.
wait_re "[0-9]+ rejected writer:1 \(last" 20 && ok "the locks panel counts the writers' rejections" ||
	fail "no rejection counts"
count_over() { N1=$(grep -oE "[0-9]+ rejected writer:1" <<<"$SCREEN" | head -1 | grep -oE '^[0-9]+'); [ "${N1:-0}" -ge "$1" ]; }
until_seen 30 count_over 100 && ok "the count grows: $N1 rejections in the last 60 s" || fail "rejections: ${N1:-none}"
capture demo-writer-storm-1-storm
wait_sql "SELECT phase FROM cleanup.jobs WHERE id = $J" completed 60 && ok "the runner completed the job" ||
	fail "not completed"
wait_for "demo: job $J completed at step" 15 || fail "completion not narrated"
REJ=$(sql "SELECT count(*) FROM cleanup.events WHERE kind = 'rejected' AND at > now() - interval '60 s'")
[ "${REJ:-0}" -ge "${N1:-1}" ] && [ "${N1:-0}" -gt 0 ] && ok "rejections: $N1 shown, $REJ recorded in the last 60 s" ||
	fail "rejections: shown $N1, recorded $REJ"
# The log keeps the engine's events among the rejections (issue 11, bug 1):
# the job's creation, seal and completion, however many rejections came in
# between (the terminal is tall enough for the log to hold them all).
wait_re "completed +job $J " 10 && wait_re "sealed +job $J " && wait_re "created +job $J " &&
	ok "the log keeps the engine's events: created, sealed, completed" || fail "engine events missing from the log"
read -r D K M A X T <<<"$(sql "SELECT deleted, kept, moved, absent, examined, total_estimate FROM cleanup.jobs WHERE id = $J" | tr '|' ' ')"
wait_for "deleted $D, kept $K, moved $M, absent $A: $X examined" &&
	ok "the completion is narrated with the job's counters" || fail "narrated counters differ from $D/$K/$M/$A/$X"
capture demo-writer-storm-2-done
MANIFEST=$(sql "SELECT count(*) FROM cleanup.manifest WHERE job_id = $J")
# Survivors: items of library 1 at sealing (id <= the high-water id, ids and
# external IDs immutable, A4) outside the manifest that still exist
# anywhere: a writer moved each out before the job reached it (and may
# have moved it back since the job ended; writers never delete).
ESCAPED=$(sql "SELECT count(*) FROM inventory.items i WHERE i.external_id LIKE 'ext-1-%'
                 AND i.id <= (SELECT high_water_id FROM cleanup.jobs WHERE id = $J)
                 AND NOT EXISTS (SELECT 1 FROM cleanup.manifest m WHERE m.job_id = $J AND m.external_id = i.external_id)")
[ "$T" = "$ITEMS" ] && [ "$D" = $((ITEMS - MANIFEST - ESCAPED)) ] && [ "$X" = $((D + K + M + A)) ] &&
	ok "counters exact: $D deleted = $ITEMS items - $MANIFEST in the manifest - $ESCAPED moved out first" ||
	fail "counters: deleted $D kept $K moved $M absent $A examined $X of $T; $ITEMS items, manifest $MANIFEST, moved out $ESCAPED"
[ "$(sql "SELECT sum(deleted) FROM cleanup.job_steps WHERE job_id = $J")" = "$D" ] &&
	ok "the steps' deletions add up to the job's" || fail "steps' deletions"
quit_console && ok "q quits" || fail "quit"
wait_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'cleanupctl:%'" 0 15 &&
	ok "no demo process left behind" || fail "demo processes left"
finish
