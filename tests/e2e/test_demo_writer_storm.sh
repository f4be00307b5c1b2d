# `cleanupctl demo writer-storm`, followed from the
# console alone. The demo job (sealed, its library fenced) is run two steps
# a second while two writers write 100 times a second each on its server:
# the locks panel counts their rejections and busy retries, the log keeps
# the engine's events among them (the job's creation and seal), the
# completion is narrated with counters that match the database (count(*)).
# Every wait observes the screen or the database.
. "$(dirname "$0")/lib.sh"

# The scenario seeds a library of its own (1,200 items, on a server of its
# own): the job takes about 8 s at 2 steps a second,
# thousands of rejected writes.
db_fresh demo_ws
ROWS=70 demo_console "demo writer-storm: job 1 drains library" 2 "'$CLEANUPCTL' --db '$DB' demo writer-storm"
J=1
read -r L S ITEMS <<<"$(sql "SELECT library_id, server_id, scope_count FROM cleanup.jobs WHERE id = $J" | tr '|' ' ')"
[ "$ITEMS" = 1200 ] && [ "$L" = 5 ] && ok "a fresh library ($L, server $S) of 1200 items" || fail "library $L server $S items $ITEMS"
wait_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'cleanupctl:writer:$S'" 2 15 &&
	ok "two writers on the job's server" || fail "writers"
# The storm: rejections counted in the locks panel, per writer.
wait_re "[0-9]+ rejected writer:$S \(last" 20 && ok "the locks panel counts the writers' rejections" ||
	fail "no rejection counts"
count_over() { N1=$(grep -oE "[0-9]+ rejected writer:$S" <<<"$SCREEN" | head -1 | grep -oE '^[0-9]+'); [ "${N1:-0}" -ge "$1" ]; }
until_seen 30 count_over 100 && ok "the count grows: $N1 rejections in the last 60 s" || fail "rejections: ${N1:-none}"
capture demo-writer-storm-1-storm
demo_completed "$J" "the runner"
REJ=$(sql "SELECT count(*) FROM cleanup.events WHERE kind = 'rejected' AND at > now() - interval '60 s'")
[ "${REJ:-0}" -ge "${N1:-1}" ] && [ "${N1:-0}" -gt 0 ] && ok "rejections: $N1 shown, $REJ recorded in the last 60 s" ||
	fail "rejections: shown $N1, recorded $REJ"
# The log keeps the engine's events among the rejections:
# the job's creation, seal and completion, however many rejections came in
# between. The newest are in view; the oldest (created) may have scrolled
# below, behind busy retries a loaded machine adds: G in the log shows them.
wait_re "completed +job $J " 10 || fail "the completion is missing from the log"
focus log && keys G || fail "the log panel could not be focused"
wait_re "created +job $J " && wait_re "sealed +job $J " &&
	ok "the log keeps the engine's events: created, sealed, completed" || fail "engine events missing from the log"
capture demo-writer-storm-2-done
demo_counters_exact "$J" "$L" "$ITEMS"
demo_quit
finish
