#!/bin/bash
# `cleanupctl locks` never puts a byte a terminal would act on onto the
# terminal (untrusted text): every text column comes from whatever a
# login role chose (its application_name, its query text, the names of the
# tables it locks), so the tree shows them sanitized ('?') and --json
# escapes them. Waits are on an observed lock (pg_blocking_pids), never on
# time. (PostgreSQL itself turns non-ASCII and control bytes of
# application_name into '?'; query text and quoted table names reach the
# lock view raw, and they failed this test before the fix.)
. "$(dirname "$0")/lib_foundation.sh"

db_fresh cleanup_lab_t_cli_locks_sanitize

wait_for() {
	local what=$1 n=0
	shift
	until "$@"; do
		n=$((n + 1))
		[ "$n" -lt 3000 ] || { fail "timed out waiting for $what"; return 1; }
		sleep 0.02
	done
}
holder_idle() { [ -n "$(sql "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'cleanupctl:evil%' AND state = 'idle in transaction'")" ]; }
writer_blocked() { [ -n "$(sql "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'cleanupctl:w-evil%' AND cardinality(pg_blocking_pids(pid)) > 0")" ]; }

EVIL=$'\e]0;pwned\a\e[2J\u009b31m\u202eevil'
TABLE="\"t${EVIL}\""
sql "CREATE TABLE public.$TABLE (id int PRIMARY KEY, v text); INSERT INTO public.$TABLE VALUES (1, 'x')" >/dev/null
same "$(sql "SELECT count(*) FROM pg_class WHERE relkind = 'r' AND position(chr(27) in relname) > 0")" "1" "the evil table exists"

CURRENT="locks: a blocking pair whose query text, table and application_name hold escape sequences"
mkfifo "$TMPD/hold"
PGAPPNAME="cleanupctl:evil${EVIL}" psql -X -q "$DB" <"$TMPD/hold" >/dev/null 2>&1 &
hpsql=$!
exec 7>"$TMPD/hold"
printf '%s\n' "BEGIN; UPDATE public.$TABLE SET v = 'held' WHERE id = 1; SELECT 1 /* holder ${EVIL} */;" >&7
wait_for "the holder" holder_idle
PGAPPNAME="cleanupctl:w-evil${EVIL}" psql -X -q "$DB" \
	-c "UPDATE public.$TABLE SET v = 'waiting' /* writer ${EVIL} */ WHERE id = 1" >/dev/null 2>&1 &
wpsql=$!
wait_for "the writer to block" writer_blocked
same "$(sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND position(chr(27) in query) > 0 AND query LIKE '%holder%'")" \
	"1" "the holder's query text holds the raw ESC"

run locks
printf '%s\n%s' "$OUT" "$ERR" >"$TMPD/human"
expect 0 "2 backends, 1 blocked" "cleanupctl:evil?]0;pwned??[2J" "holder ?]0;pwned??[2J?31m?evil" \
	'(public."t?]0;pwned??[2J' 'UPDATE public."t?]0;pwned??[2J?31m?evil" SET v'
same "$(raw_controls "$TMPD/human")" "0" "raw control bytes in \`locks\`"

CURRENT="locks --json: the same texts, escaped"
run --json locks
expect 0
printf '%s' "$OUT" >"$TMPD/json"
same "$(raw_controls "$TMPD/json")" "0" "raw control bytes in \`locks --json\`"
jq -e . "$TMPD/json" >/dev/null 2>&1 || fail "not one JSON document ($CURRENT)"
same "$(jq -r '.blocked' "$TMPD/json")" "1" "locks --json: blocked"
jq -r '.backends[].query' "$TMPD/json" | grep -q $'holder \e]0;pwned' ||
	fail "the decoded JSON lost the holder's query text ($CURRENT)"

echo "COMMIT;" >&7
exec 7>&-
wait "$hpsql" "$wpsql"

finish
