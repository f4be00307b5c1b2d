# make demo and cleanupctl demo: off a terminal both print status and exit 0
# (CI never hangs) after making sure there is a sealed, draining prune job;
# on a terminal they open the console with two simulated writers, whose
# backends show in the locks panel, and stop the writers when it exits.
. "$(dirname "$0")/lib.sh"

writers() { sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'cleanupctl:writer:%'"; }

db_fresh demo

# scripts/demo.sh without a terminal.
out=$(CLEANUP_DEMO_DB="$DB" timeout 120 sh "$CLEANUP_SOURCE_DIR/scripts/demo.sh" "$CLEANUP_BINARY_DIR" </dev/null 2>"$E2E_TMP/err")
rc=$?
[ "$rc" = 0 ] && ok "demo.sh off a terminal exits 0" || fail "demo.sh exit $rc: $(cat "$E2E_TMP/err")"
grep -q "printing status" "$E2E_TMP/err" && grep -q "draining" <<<"$out" && ok "demo.sh printed status" ||
	fail "demo.sh output: $out"
[ "$(sql "SELECT count(*) FROM cleanup.jobs WHERE kind = 'prune' AND phase = 'draining' AND expected_count = manifest_count AND manifest_count > 0")" = 1 ] &&
	ok "demo.sh left a sealed, draining prune job" || fail "no sealed demo job"
[ "$(writers)" = 0 ] || fail "demo.sh off a terminal left writers"

# cleanupctl demo without a terminal: reuses that job.
"$CLEANUPCTL" --db "$DB" demo </dev/null >"$E2E_TMP/out" 2>"$E2E_TMP/err"
rc=$?
[ "$rc" = 0 ] && grep -q "is still draining" "$E2E_TMP/err" && [ "$(sql "SELECT count(*) FROM cleanup.jobs")" = 1 ] &&
	ok "cleanupctl demo off a terminal: status, job reused" || fail "cleanupctl demo: $rc $(cat "$E2E_TMP/err")"

# On a terminal: the console with two writers, stopped at exit.
for how in script binary; do
	if [ "$how" = script ]; then
		start_cmd "env CLEANUP_DEMO_DB='$DB' sh '$CLEANUP_SOURCE_DIR/scripts/demo.sh' '$CLEANUP_BINARY_DIR'"
	else
		start_cmd "'$CLEANUPCTL' --db '$DB' demo"
	fi
	wait_for "cmdline: $CMDLINE_BACKEND" 30 || fail "$how: console did not open"
	wait_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'cleanupctl:writer:%'" 2 15 &&
		ok "$how: two writers running" || fail "$how: writers"
	wait_re "writer [0-9]+ " 10 && ok "$how: writers in the locks panel" || fail "$how: locks panel"
	quit_console && ok "$how: console quit" || fail "$how: quit"
	wait_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'cleanupctl:writer:%'" 0 15 &&
		ok "$how: writers stopped with the console" || fail "$how: writers left running"
done
finish
