#!/bin/bash
# `cleanupctl job append`, one WAL flush per chunk (docs/benchmarks-append.md):
# the calls of a pipelined run commit without waiting for their own WAL
# flush, and one flush barrier at the end of the run makes them durable
# before anything is reported; each call inserts optimistically and falls
# back to ON CONFLICT when an ID is already there. What must still hold:
#   C1  a call is all or nothing, validated, counted; a run the command
#       reported is durable: it survives a server crash (pg_ctl stop -m
#       immediate) right after the command returned, with the WAL writer
#       slowed to 10 s so that nothing else flushes it;
#   C2  a replay adds nothing, and a mix of new and present IDs (the
#       fallback) adds exactly the new ones;
#   C9  a protected ID (written into the library while collecting) becomes
#       seen when appended, through the fallback;
#   C3  the job's count equals the seen rows of the manifest throughout;
#   roles: a cleanup_runner login (no superuser, no TEMPORARY needed) does
#       all of it; bad input is refused with its line and rule, nothing
#       appended; appends after the seal are refused (exit 4).
# A server crash needs a server of its own: a private sandbox.
. "$(dirname "$0")/../crash/lib.sh"
private_sandbox append_durable
crash_init append_durable
q "SELECT cleanup_lab.seed_demo(1, 1, 20)" >/dev/null

# ids FROM TO: IDs a-FROM .. a-TO, one a line, in a scrambled order.
ids() { seq "$1" "$2" | sed 's/^/a-/' | sort -R --random-source=<(yes); }

# counts JOB: "manifest_count seen protected" of JOB.
counts() {
	q "SELECT j.manifest_count || ' ' || count(m.*) FILTER (WHERE NOT m.protected) || ' ' ||
	          count(m.*) FILTER (WHERE m.protected)
	     FROM cleanup.jobs j LEFT JOIN cleanup.manifest m ON m.job_id = j.id
	    WHERE j.id = :'j' GROUP BY j.manifest_count" -v j="$1"
}

# The runner's login (cluster-wide roles; this is a private server).
q "CREATE ROLE t_append_runner LOGIN; GRANT cleanup_runner TO t_append_runner;
   REVOKE TEMPORARY ON DATABASE $DB FROM PUBLIC" >/dev/null
RUNNER=${CONN/user=postgres/user=t_append_runner}
assert_eq "$(q "SELECT has_database_privilege('t_append_runner', current_database(), 'TEMPORARY')")" f \
	"the runner has no TEMPORARY privilege"
assert_eq "$(q "SELECT rolsuper FROM pg_roles WHERE rolname = 't_append_runner'")" f "the runner is no superuser"

JOB=$(job_create prune 1)
[ -n "$JOB" ] || fail "job create"

log "C1: a run of 2,100 IDs (a chunk of 16 calls and one of 1) as the runner, then a crash"
ids 1 2100 >"$CRASH_TMP/ids"
out=$("$CLEANUPCTL" --db "$RUNNER" --json job append "$JOB" <"$CRASH_TMP/ids") || fail "append as the runner: exit $?"
assert_eq "$(jq -r '"\(.added) \(.duplicates) \(.calls) \(.manifest_count)"' <<<"$out")" "2100 0 17 2100" \
	"added, duplicates, calls and manifest_count reported"
server_stop_immediate
server_start
assert_eq "$(counts "$JOB")" "2100 2100 0" "count, seen and protected rows after a crash right after the command"

log "C2: a replay adds nothing; a mix adds exactly the new IDs (the fallback)"
out=$("$CLEANUPCTL" --db "$RUNNER" --json job append "$JOB" <"$CRASH_TMP/ids") || fail "replay: exit $?"
assert_eq "$(jq -r '"\(.added) \(.duplicates) \(.manifest_count)"' <<<"$out")" "0 2100 2100" "replay"
ids 2001 2300 >"$CRASH_TMP/mix"
out=$("$CLEANUPCTL" --db "$RUNNER" --json job append "$JOB" <"$CRASH_TMP/mix") || fail "mix: exit $?"
assert_eq "$(jq -r '"\(.added) \(.duplicates) \(.manifest_count)"' <<<"$out")" "200 100 2300" "a mix of 100 old, 200 new"
# Duplicates within one call count once.
out=$("$CLEANUPCTL" --db "$RUNNER" --json job append "$JOB" a-5000 a-5000 a-1) || fail "dup in one call: exit $?"
assert_eq "$(jq -r '"\(.added) \(.duplicates) \(.manifest_count)"' <<<"$out")" "1 2 2301" "duplicates within a call"
assert_eq "$(counts "$JOB")" "2301 2301 0" "count, seen and protected rows after the replays"

log "C9: a protected ID becomes seen when appended"
q "INSERT INTO inventory.items (library_id, external_id, title) VALUES (1, 'p-new', 'written while collecting')" \
	>/dev/null
assert_eq "$(counts "$JOB")" "2301 2301 1" "the written ID is protected, not counted"
out=$("$CLEANUPCTL" --db "$RUNNER" --json job append "$JOB" a-6000 p-new a-1) || fail "protected: exit $?"
assert_eq "$(jq -r '"\(.added) \(.duplicates) \(.manifest_count)"' <<<"$out")" "2 1 2303" "a protected ID appended"
assert_eq "$(counts "$JOB")" "2303 2303 0" "count, seen and protected rows after appending the protected ID"

log "notifications: a run of appends notifies about once a second, not once a call"
ids 10001 12100 >"$CRASH_TMP/ids2"
t0=$(date +%s)
notes=$(psql -X -q "$CONN" 2>&1 <<EOF
LISTEN cleanup_jobs;
\\! "$CLEANUPCTL" --db "$RUNNER" --quiet job append $JOB < "$CRASH_TMP/ids2" > /dev/null
SELECT 1;
EOF
)
elapsed=$(($(date +%s) - t0))
n=$(grep -c 'notification "cleanup_jobs"' <<<"$notes" || true)
assert_le "$n" $((elapsed + 2)) "notifications of a run of 17 calls in ${elapsed} s (one a call before)"
assert_eq "$(counts "$JOB")" "4403 4403 0" "count, seen and protected rows after the listened run"

log "bad input: refused with its line and rule, nothing appended"
before=$(job_hash "$JOB")
printf 'a-7000\na-70\001\n' >"$CRASH_TMP/bad"
rc=0
err=$("$CLEANUPCTL" --db "$RUNNER" job append "$JOB" <"$CRASH_TMP/bad" 2>&1 >/dev/null) || rc=$?
assert_eq "$rc" 2 "exit status of bad input"
[[ $err == *"line 2 of stdin"*"control character"* ]] || fail "bad input: the message names the line and rule: $err"
assert_eq "$(job_hash "$JOB")" "$before" "job and manifest after the refused input"

log "seal, then an append is refused, nothing appended"
notes=$(psql -X -q "$CONN" 2>&1 <<EOF
LISTEN cleanup_jobs;
\\! "$CLEANUPCTL" --db "$CONN" --quiet job seal $JOB --expected 4403 > /dev/null
SELECT 1;
EOF
)
[[ $notes == *'notification "cleanup_jobs" with payload "{"id" : '$JOB', "phase" : "draining"'* ]] ||
	fail "the seal notifies its phase change: $notes"
before=$(job_hash "$JOB")
rc=0
err=$("$CLEANUPCTL" --db "$RUNNER" job append "$JOB" <"$CRASH_TMP/mix" 2>&1 >/dev/null) || rc=$?
assert_eq "$rc" 4 "exit status of an append after the seal"
[[ $err == *"no longer collecting"* ]] || fail "append after seal: the message says why: $err"
assert_eq "$(job_hash "$JOB")" "$before" "job and manifest after the refused append"

log "every check passed"
