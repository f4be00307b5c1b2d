#!/usr/bin/env bash
# Conventions users expect from an installed tool:
# - --version names the program, the schema and libpq (text and --json);
# - the libpq environment works as for psql: PGSERVICE with PGSERVICEFILE,
#   ~/.pgpass and PGPASSFILE (a password-protected role on a private
#   sandbox), sslmode in --db and PGSSLMODE (a bad value is refused naming
#   it; over the Unix socket libpq uses no SSL, so require connects);
# - --wait SECONDS on a busy job: without it one attempt and exit 3 at once;
#   with it retries until the deadline, then exit 3 saying so (also as the
#   JSON error's detail); and a wait that outlives the lock succeeds once
#   the holder is gone (observed in pg_stat_activity, not slept on).
source "$(dirname "$0")/lib_foundation.sh"

bad() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
CURRENT="--wait on a held job row"
VERSION=$(sed -n 's/^#define CLEANUP_VERSION "\(.*\)"/\1/p' "$CLEANUP_BINARY_DIR/config.h")

# --- --version ------------------------------------------------------------
out=$("$CLEANUPCTL" --version)
[ "$(sed -n 1p <<<"$out")" = "cleanupctl $VERSION" ] || bad "--version line 1: $out"
grep -qE '^schema [0-9]+$' <<<"$out" || bad "--version has no schema line: $out"
grep -qE '^libpq [0-9]+\.[0-9]+$' <<<"$out" || bad "--version has no libpq line: $out"
out=$("$CLEANUPCTL" --json --version)
[ "$(jq -r '.program + " " + .version' <<<"$out")" = "cleanupctl $VERSION" ] &&
	[ "$(jq -r '.schema_version | type' <<<"$out")" = number ] &&
	jq -re '.libpq_version | test("^[0-9]+\\.[0-9]+$")' <<<"$out" >/dev/null &&
	[ "$(jq -r .json_version <<<"$out")" = 2 ] || bad "--json --version: $out"

# --- PGSERVICE ---------------------------------------------------------------
db_fresh cleanup_lab_conv
"$CLEANUPCTL" --quiet --db "$DB" seed --servers 1 --libraries 2 --items 20 >/dev/null || bad "seed failed"
cat >"$TMPD/services" <<EOF
[cleanupctl_test]
host=$SOCK
port=$PORT
dbname=cleanup_lab_conv
user=postgres
EOF
out=$(PGSERVICEFILE="$TMPD/services" PGSERVICE=cleanupctl_test "$CLEANUPCTL" --json locks 2>&1)
[ "$(jq -r .database <<<"$out" 2>/dev/null)" = cleanup_lab_conv ] || bad "PGSERVICE did not reach its database: $out"
out=$(PGSERVICEFILE="$TMPD/services" "$CLEANUPCTL" --db "service=cleanupctl_test" --json locks 2>&1)
[ "$(jq -r .database <<<"$out" 2>/dev/null)" = cleanup_lab_conv ] || bad "--db service=NAME did not work: $out"
out=$(PGSERVICEFILE="$TMPD/services" PGSERVICE=no_such_service "$CLEANUPCTL" locks 2>&1)
RC=$?
[ "$RC" = 1 ] && grep -q 'no_such_service' <<<"$out" || bad "an unknown PGSERVICE: exit $RC, $out"

# --- sslmode -----------------------------------------------------------------
out=$("$CLEANUPCTL" --db "$DB sslmode=bogus" locks 2>&1)
RC=$?
[ "$RC" = 1 ] && grep -q 'sslmode value: "bogus"' <<<"$out" || bad "sslmode=bogus: exit $RC, $out"
out=$(PGSSLMODE=bogus PGSERVICEFILE="$TMPD/services" PGSERVICE=cleanupctl_test "$CLEANUPCTL" locks 2>&1)
RC=$?
[ "$RC" = 1 ] && grep -q 'bogus' <<<"$out" || bad "PGSSLMODE=bogus is not honoured: exit $RC, $out"
"$CLEANUPCTL" --db "$DB sslmode=require" locks >/dev/null 2>&1 || bad "sslmode=require over the Unix socket failed"
"$CLEANUPCTL" --db "$DB sslmode=disable" locks >/dev/null 2>&1 || bad "sslmode=disable failed"

# --- ~/.pgpass and PGPASSFILE, on a private sandbox with a password role ----
SB=$TMPD/sb
if "$CLEANUPCTL" --quiet sandbox start --dir "$SB" >/dev/null 2>"$TMPD/sb.err"; then
	sbinfo=$("$CLEANUPCTL" --json sandbox status --dir "$SB")
	SSOCK=$(jq -r .socket_dir <<<"$sbinfo")
	SPORT=$(jq -r .port <<<"$sbinfo")
	SDATA=$(jq -r .datadir <<<"$sbinfo")
	SADMIN="host=$SSOCK port=$SPORT dbname=postgres user=postgres"
	psql -X -q "$SADMIN" -c "CREATE ROLE cleanup_pw LOGIN PASSWORD 'pw-s3cret'" || bad "CREATE ROLE failed"
	{ echo "local all cleanup_pw scram-sha-256"; cat "$SDATA/pg_hba.conf"; } >"$TMPD/hba"
	cat "$TMPD/hba" >"$SDATA/pg_hba.conf"
	psql -X -q -t "$SADMIN" -c "SELECT pg_reload_conf()" >/dev/null
	PWDB="host=$SSOCK port=$SPORT dbname=postgres user=cleanup_pw"
	mkdir -p "$TMPD/home"
	# No password anywhere: refused, never a prompt.
	out=$(HOME="$TMPD/home" PGPASSFILE=/nonexistent "$CLEANUPCTL" --db "$PWDB" locks 2>&1 </dev/null)
	RC=$?
	[ "$RC" = 1 ] && grep -qi 'password' <<<"$out" || bad "no password: exit $RC, $out"
	# ~/.pgpass (mode 0600), as psql reads it.
	echo "*:*:*:cleanup_pw:pw-s3cret" >"$TMPD/home/.pgpass"
	chmod 600 "$TMPD/home/.pgpass"
	# (authenticated: the next thing it says is that this database has no
	# cleanup schema, which only a logged-in session can find out)
	authenticated() { ! grep -qi 'password' <<<"$1" && grep -q 'schema "cleanup" does not exist' <<<"$1"; }
	out=$(env -u PGPASSFILE HOME="$TMPD/home" "$CLEANUPCTL" --db "$PWDB" locks 2>&1)
	authenticated "$out" || bad "~/.pgpass was not used: $out"
	# PGPASSFILE.
	mv "$TMPD/home/.pgpass" "$TMPD/pgpass"
	out=$(HOME="$TMPD/home" PGPASSFILE="$TMPD/pgpass" "$CLEANUPCTL" --db "$PWDB" locks 2>&1)
	authenticated "$out" || bad "PGPASSFILE was not used: $out"
	# a wrong password in the file: refused as a password failure
	echo "*:*:*:cleanup_pw:wrong" >"$TMPD/pgpass"
	out=$(HOME="$TMPD/home" PGPASSFILE="$TMPD/pgpass" "$CLEANUPCTL" --db "$PWDB" locks 2>&1)
	RC=$?
	[ "$RC" = 1 ] && grep -q 'password authentication failed' <<<"$out" || bad "a wrong .pgpass password: exit $RC, $out"
	"$CLEANUPCTL" --quiet sandbox stop --dir "$SB" >/dev/null 2>&1
else
	bad "a private sandbox for the password tests did not start: $(cat "$TMPD/sb.err")"
fi

# --- --wait ------------------------------------------------------------------
run --json job create prune --library 1
JOB=$(jq -r .id <<<"$OUT")
[ "$JOB" -gt 0 ] 2>/dev/null || bad "job create: $OUT $ERR"
# hold JOB's row in another session until terminated
psql -X -q "$DB application_name=hc_lock_holder" \
	-c "BEGIN" -c "SELECT 1 FROM cleanup.jobs WHERE id = $JOB FOR UPDATE" -c "SELECT pg_sleep(120)" \
	>/dev/null 2>&1 &
HOLDER=$!
for _ in $(seq 1 100); do
	[ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'hc_lock_holder'
	         AND state = 'active' AND query LIKE '%pg_sleep%'")" -gt 0 ] && break
	sleep 0.1
done
before=$(fingerprint)
now() { date +%s.%N; }
start=$(now)
run job pause "$JOB"
t0=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')
[ "$RC" = 3 ] || bad "job pause of a locked job without --wait: exit $RC, $ERR"
grep -q 'still busy after' <<<"$ERR" && bad "job pause without --wait retried (took $t0 s): $ERR"
start=$(now)
run --json job pause "$JOB" --wait 1.5
t1=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')
[ "$RC" = 3 ] || bad "job pause --wait 1.5 on a held lock: exit $RC, $ERR"
[ "$(jq -r .error.status <<<"$OUT")" = busy ] && jq -r .error.detail <<<"$OUT" | grep -q 'still busy after --wait 1.5 s' ||
	bad "job pause --wait 1.5 JSON error: $OUT"
attempts=$(jq -r .error.detail <<<"$OUT" | sed -n 's/.*(\([0-9]*\) attempts).*/\1/p')
[ "${attempts:-0}" -ge 4 ] || bad "job pause --wait 1.5 made ${attempts:-0} attempts; the backoff should try at least 4 times"
awk -v t="$t1" 'BEGIN { exit !(t >= 1.5 && t < 60) }' || bad "job pause --wait 1.5 returned after $t1 s"
unchanged "$before"
run job pause "$JOB" --wait -1
[ "$RC" = 2 ] && grep -q -- '--wait' <<<"$ERR" || bad "--wait -1: exit $RC, $ERR"
run job pause "$JOB" --wait 1e3
[ "$RC" = 2 ] || bad "--wait 1e3: exit $RC, $ERR"
unchanged "$before"
# A wait that outlives the lock: it succeeds once the holder is gone.
"$CLEANUPCTL" --db "$DB" job pause "$JOB" --wait 60 >"$TMPD/wait.out" 2>"$TMPD/wait.err" &
WAITER=$!
for _ in $(seq 1 100); do
	[ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'cleanupctl:job:$JOB:pause'")" -gt 0 ] && break
	sleep 0.1
done
sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'hc_lock_holder'" >/dev/null
wait "$HOLDER" 2>/dev/null
timeout 30 tail --pid="$WAITER" -f /dev/null
wait "$WAITER"
RC=$?
[ "$RC" = 0 ] && grep -q "paused job $JOB" "$TMPD/wait.out" ||
	bad "job pause --wait 60 after the lock went away: exit $RC, $(cat "$TMPD/wait.out" "$TMPD/wait.err")"
[ "$(sql "SELECT phase FROM cleanup.jobs WHERE id = $JOB")" = paused ] || bad "the job is not paused"

if [ "$FAILS" -gt 0 ]; then
	echo "$FAILS failed"
	exit 1
fi
echo "conventions: --version, PGSERVICE, pgpass, sslmode, --wait: all passed"
