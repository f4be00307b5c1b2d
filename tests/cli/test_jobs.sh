#!/bin/bash
# cleanupctl job create|append|seal|pause|resume|cancel|show, jobs, status
# through the real binary: exit codes, messages naming the value and the
# rule, --json keys (PRODUCT.md) checked with jq, and no change to the data
# after every refusal (C1-C8, and bad input).
. "$(dirname "$0")/lib_foundation.sh"

db_fresh cleanup_lab_t_cli_jobs
sql "SELECT cleanup_lab.seed_demo(2, 2, 10)" >/dev/null
# Server 1: libraries 1, 2; server 2: libraries 3, 4; ext-<lib>-1..10 each.

# new_prune VAR LIBRARY: `job create prune --library LIBRARY --json` exits
# 0; the new job's id in VAR, its document in $OUT.
new_prune() {
	run --json job create prune --library "$2"
	expect 0
	printf -v "$1" %s "$(jq -r .id <<<"$OUT")"
}

KEYS='["id","kind","server_id","library_id","phase","step_no","visited","deleted","moved","absent","retained","manifest_count","expected_count","high_water_id"]'

CURRENT="job create --json"
new_prune J 1
jq -e --argjson k "$KEYS" '. as $j | all($k[]; . as $key | $j | has($key))' <<<"$OUT" >/dev/null ||
	fail "job create --json lacks a PRODUCT.md key"
same "$(jq -r '[.kind, .phase, .server_id, .library_id, .step_no, .manifest_count, .expected_count, .high_water_id] | @csv' <<<"$OUT")" \
	'"prune","collecting",1,1,0,0,,' "fields of a new prune job"

CURRENT="job create: busy server (C7)"
before=$(fingerprint)
run job create prune --library 2
expect 4 "refused" "server 1 already has unfinished job $J" "collecting" "finish or cancel job $J"
unchanged "$before"
run job create remove-server --server 1
expect 4 "job $J"
unchanged "$before"
CURRENT="job create: another server is independent (C7)"
new_prune J3 3
run job cancel "$J3"
expect 0 "cancelled job $J3"

CURRENT="job append argv (C1, C2)"
run job append "$J" ext-1-1 ext-1-2 ext-1-1
expect 0 "job $J: 2 new, 1 duplicate in 1 call; manifest holds 2 IDs"
run --json job append "$J" ext-1-2 ext-1-3
expect 0
same "$(jq -c '[.id, .added, .duplicates, .calls, .manifest_count]' <<<"$OUT")" "[$J,1,1,1,3]" "append --json"

CURRENT="job append stdin in calls of 128"
seq 1 300 | sed 's/^/s-/' >"$TMPD/ids"
printf 'ext-1-1\next-1-2\n' >>"$TMPD/ids"
run_in "$TMPD/ids" --json job append "$J"
expect 0
same "$(jq -c '[.added, .duplicates, .calls, .manifest_count]' <<<"$OUT")" "[300,2,3,303]" "append from stdin"

CURRENT="job append: 129 IDs in one call (C1)"
before=$(fingerprint)
run job append "$J" $(seq 1 129 | sed 's/^/m-/')
expect 2 "too many external IDs in one call: 129" "the limit is 128"
unchanged "$before"

CURRENT="job append: bad IDs (C1)"
run job append "$J" good ""
expect 2 'external ID #2' "must not be empty" "nothing was appended"
unchanged "$before"
run job append "$J" good "$(printf 'x%.0s' $(seq 1 257))"
expect 2 "257 bytes long; the limit is 256"
unchanged "$before"
run job append "$J" good $'tab\there'
expect 2 "contains a control character (U+0009"
unchanged "$before"
run job append "$J" $'\xff\xfe'
expect 2 "is not valid UTF-8 (byte 0xFF at offset 0)"
unchanged "$before"
run job append "$J" $'cr\r'
expect 2 "control character (U+000D"
unchanged "$before"

CURRENT="job append: a bad line on stdin stops before its call"
printf 'n-1\nn-2\nn-3\nn-4\n\nn-6\n' >"$TMPD/bad"
run_in "$TMPD/bad" job append "$J"
expect 2 "line 5 of stdin" "must not be empty"
unchanged "$before"
# A bad line after the first chunk (16 calls of 128): the earlier calls
# stay committed and are reported; repeating the fixed input is idempotent.
{ seq 1 2100 | sed 's/^/big-/'; printf 'bad\001id\n'; } >"$TMPD/late"
run_in "$TMPD/late" job append "$J"
expect 2 "line 2101 of stdin" "control character" "16 earlier calls (2048 new IDs) committed"
same "$(sql "SELECT manifest_count FROM cleanup.jobs WHERE id = $J")" "2351" "manifest after a partial stream"
seq 1 2100 | sed 's/^/big-/' >"$TMPD/fixed"
run_in "$TMPD/fixed" --json job append "$J"
expect 0
same "$(jq -c '[.added, .duplicates, .manifest_count]' <<<"$OUT")" "[52,2048,2403]" "re-running the fixed stream"

CURRENT="unknown job id"
before=$(fingerprint)
for verb in "append 999999 x" "seal 999999 --expected 0" "pause 999999" "resume 999999" "cancel 999999" "show 999999"; do
	run job $verb
	expect 1 "job 999999 does not exist"
done
unchanged "$before"

CURRENT="usage errors"
run job seal "$J"
expect 2 "--expected N"
run job seal "$J" --expected -1
expect 2 "--expected must be an integer from 0"
run job seal "$J" --expected 12abc
expect 2 '"12abc"'
run job create prune
expect 2 "needs --library ID"
run job create prune --library 0
expect 2 "--library must be an integer from 1"
run job frobnicate
expect 2 'unknown job subcommand "frobnicate"'
run job pause
expect 2 "exactly one job id"
unchanged "$before"

CURRENT="no deletion without a seal (C4)"
before=$(fingerprint)
run job step "$J"
expect 4 "has no step to run" "seal it first"
run job run "$J"
expect 4 "has no step to run"
unchanged "$before"

CURRENT="pause refuses appends (exit 4), resume"
run --json job pause "$J"
expect 0
same "$(jq -r .phase <<<"$OUT")" "paused" "phase after pause"
before=$(fingerprint)
run job append "$J" p-1
expect 4 "refused" "is paused; resume it before appending" "cleanupctl job resume $J"
unchanged "$before"
run job seal "$J" --expected 2403
expect 4 "is paused"
run job run "$J"
expect 4 "has no step to run"
unchanged "$before"
run job resume "$J"
expect 0 "resumed job $J"

CURRENT="seal with a wrong count (C3)"
before=$(fingerprint)
run job seal "$J" --expected 2402
expect 4 "expected 2402 unique IDs but the manifest of job $J holds 2403" "nothing changed"
unchanged "$before"

CURRENT="seal (C3, C6)"
run --json job seal "$J" --expected 2403
expect 0
same "$(jq -r '[.phase, .expected_count, .manifest_count, (.high_water_id > 0)] | @csv' <<<"$OUT")" \
	'"draining",2403,2403,true' "sealed job"
same "$(sql "SELECT state || ':' || job_id FROM cleanup.library_admission WHERE library_id = 1")" "draining:$J" \
	"library 1 fenced"

CURRENT="seal twice, append after seal, pause after seal"
before=$(fingerprint)
run job seal "$J" --expected 2403
expect 4 "already sealed or finished; a manifest is sealed once"
run job append "$J" late-1
expect 4 "is no longer collecting; appends are refused after sealing"
run job pause "$J"
expect 4 "only collecting jobs pause"
unchanged "$before"

CURRENT="empty manifest sealed with --expected 0 (C5)"
new_prune J4 4
run job append "$J4"
expect 0 "0 new, 0 duplicate in 1 call; manifest holds 0 IDs"
run --json job seal "$J4" --expected 0
expect 0
same "$(jq -r '[.phase, .manifest_count, .expected_count] | @csv' <<<"$OUT")" '"draining",0,0' "empty seal"
same "$(jq -r .high_water_id <<<"$OUT")" "$(sql "SELECT max(id) FROM inventory.items WHERE library_id = 4")" \
	"high-water id of the emptied library"

CURRENT="job show, jobs, status --json"
run --json job show "$J"
expect 0
jq -e --argjson k "$KEYS" '. as $j | all($k[]; . as $key | $j | has($key)) and (.steps | type == "array")' \
	<<<"$OUT" >/dev/null || fail "job show --json keys"
run job show "$J"
expect 0 "job $J" "phase         draining" "manifest      2,403 IDs, sealed with expected 2,403"
run --json jobs
expect 0
jq -e --argjson k "$KEYS" 'type == "array" and length >= 3 and all(.[]; . as $j | all($k[]; . as $key | $j | has($key)))' \
	<<<"$OUT" >/dev/null || fail "jobs --json keys"
run --json status
expect 0
same "$(jq -c '[(.servers | length), (.servers[0].libraries | length), .servers[0].libraries[0].admission,
	.servers[0].job_id, (.jobs | length > 0)]' <<<"$OUT")" "[2,2,\"draining\",$J,true]" "status --json"
run status
expect 0 "SERVER" "draining" "JOB"
run status --watch 0.1 --count 3
expect 0
same "$(grep -c '^--- ' <<<"$OUT")" "3" "status --watch reports"
run --json status --watch 0.1 --count 2
same "$(jq -s 'length' <<<"$OUT")" "2" "status --watch --json documents"
run status --watch 0
expect 2 "--watch takes seconds"
run status --count 2
expect 2 "--count goes with --watch"

CURRENT="--json errors"
run --json job pause "$J"
expect 4
same "$(jq -c '.error | [.status, .exit_code, .sqlstate]' <<<"$OUT")" '["refused",4,"CU400"]' "--json error"

finish
