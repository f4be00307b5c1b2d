#!/bin/bash
# What the CLI prints can be trusted (untrusted text): names written by
# any writer never put escape sequences on the terminal (status, jobs, job
# show; JSON escapes them); every --json failure, usage errors included, is
# one JSON document that is valid UTF-8 whatever bytes the user gave;
# numeric options take decimal digits only, within range, once each (exit
# 2 naming the option, the value and the rule; nothing changed).
. "$(dirname "$0")/lib_foundation.sh"

db_fresh cleanup_lab_t_cli_trust
sql "SELECT cleanup_lab.seed_demo(1, 2, 5)" >/dev/null

# valid_json: $OUT is one JSON document and valid UTF-8.
valid_json() {
	printf '%s' "$OUT" >"$TMPD/json"
	python3 -c 'import json,sys; json.loads(open(sys.argv[1],"rb").read().decode("utf-8"))' "$TMPD/json" 2>/dev/null ||
		fail "not one valid UTF-8 JSON document ($CURRENT)"
	jq -e . "$TMPD/json" >/dev/null 2>&1 || fail "jq cannot read the document ($CURRENT)"
}

CURRENT="names with escape sequences are sanitized in human output"
EVIL=$'lib\e]0;pwned\a\e[2J\x7f\u009b31m\u202eevil'
sql "UPDATE inventory.libraries SET name = \$n\$${EVIL}\$n\$ WHERE id = 1" >/dev/null
sql "UPDATE inventory.media_servers SET name = \$n\$srv${EVIL}\$n\$ WHERE id = 1" >/dev/null
same "$(sql "SELECT position(chr(27) in name) > 0 FROM inventory.libraries WHERE id = 1")" "t" "the evil name is stored"
J=$(sql "SELECT id FROM cleanup.job_create('prune', 1)")
for args in "status" "jobs" "job show $J" "job pause $J" "job resume $J"; do
	CURRENT="$args: sanitized"
	# shellcheck disable=SC2086
	"$CLEANUPCTL" --db "$DB" $args >"$TMPD/human" 2>&1
	RC=$?
	OUT=$(cat "$TMPD/human")
	ERR=""
	expect 0 "lib?]0;pwned??["
	same "$(raw_controls "$TMPD/human")" "0" "raw control bytes in \`$args\`"
done
for args in "status" "jobs" "job show $J"; do
	CURRENT="$args --json: escaped"
	# shellcheck disable=SC2086
	run --json $args
	expect 0
	valid_json
	printf '%s' "$OUT" >"$TMPD/jsonout"
	same "$(raw_controls "$TMPD/jsonout")" "0" "raw control bytes in \`$args --json\`"
	grep -q 'lib\\u001b]0;pwned\\u0007' "$TMPD/jsonout" || fail "--json lacks the escaped name ($CURRENT)"
done

CURRENT="--json usage errors are JSON documents"
before=$(fingerprint)
run --json job frobnicate
expect 2
valid_json
same "$(jq -c '.error | [.status, .exit_code]' <<<"$OUT")" '["invalid",2]' "unknown job subcommand as JSON"
run --json job create prune
expect 2
valid_json
run --json status --bogus
expect 2
valid_json
same "$(jq -r .error.exit_code <<<"$OUT")" "2" "status --bogus exit_code"

CURRENT="--json error documents stay valid UTF-8 with invalid bytes in the value"
run --json job create prune --library $'\xff\xfe'
expect 2
valid_json
jq -r .error.message <<<"$OUT" | grep -q $'\uFFFD' || fail "invalid bytes not shown as U+FFFD ($CURRENT)"
run --json job run "$J" --deadline $'1\xc3'
expect 2
valid_json
run --json job append "$J" $'ok\xff'
expect 2
valid_json
CURRENT="human errors with invalid bytes and escapes are sanitized"
run job create prune --library $'\e[2J\xff'
expect 2 "--library must be an integer"
printf '%s' "$ERR" >"$TMPD/err1"
same "$(raw_controls "$TMPD/err1")" "0" "raw bytes in a usage message"

CURRENT="--json unknown command"
run --json frobnicate
expect 2 'unknown command \"frobnicate\"'
valid_json
same "$(jq -r .error.exit_code <<<"$OUT")" "2" "unknown command exit_code"
run frobnicate
expect 2 'unknown command "frobnicate"' 'usage: cleanupctl'
[ -z "$OUT" ] || fail "human unknown command printed on stdout ($CURRENT)"

# The global options, parsed before any command: --json is found first, so
# their usage errors are JSON documents too (and they go before --db, which
# `run` adds).
CURRENT="--json with --db missing its value"
"$CLEANUPCTL" --json --db >"$TMPD/out" 2>"$TMPD/err" </dev/null
RC=$?
OUT=$(cat "$TMPD/out")
ERR=$(cat "$TMPD/err")
expect 2 '--db needs a conninfo'
valid_json
same "$(jq -c '.error | [.status, .exit_code]' <<<"$OUT")" '["invalid",2]' "missing --db value as JSON"
CURRENT="--json with --db given twice"
run --json --db "host=/nonexistent dbname=elsewhere" status
expect 2 '--db given twice' 'host=/nonexistent dbname=elsewhere'
valid_json
same "$(jq -c '.error | [.status, .exit_code]' <<<"$OUT")" '["invalid",2]' "repeated --db as JSON"
run --db="$DB" jobs
expect 2 '--db given twice'
CURRENT="--json without a command"
"$CLEANUPCTL" --json >"$TMPD/out" 2>"$TMPD/err" </dev/null
RC=$?
OUT=$(cat "$TMPD/out")
ERR=$(cat "$TMPD/err")
expect 2 'no command given'
valid_json
unchanged "$before"

CURRENT="strict numeric options"
before=$(fingerprint)
for v in " 5" "+5" "5x" "0x10" "-1" "99999999999999999999" "" "1e3" "5.0"; do
	run job create prune --library "$v"
	expect 2 "--library must be an integer from 1 to 9223372036854775807, not \"$v\""
done
run job create prune --library " 5"
expect 2 'digits only: no sign, space or prefix'
run job create prune --library 99999999999999999999
expect 2 'out of range'
run job show "$J" --steps +3
expect 2 '--steps must be an integer from 0 to 1000, not "+3"'
run job seal "$J" --expected " 1"
expect 2 '--expected must be an integer' '" 1"'
run seed --items 0x10
expect 2 '--items must be an integer' '"0x10"'
run jobs --limit 1e2
expect 2 '--limit must be an integer' '"1e2"'
for v in "0x10" " 5" "+5" "1e3" "inf" "nan" "5s"; do
	run job run "$J" --deadline "$v"
	expect 2 "--deadline must be a number of seconds above 0 and at most 604800, not \"$v\""
done
run status --watch 0x1 --count 1
expect 2 '--watch takes seconds' '"0x1"'
run job step ' 1'
expect 2 'job id must be an integer' '" 1"'
unchanged "$before"

CURRENT="a repeated option is a usage error, never last-one-wins"
run job create prune --library 1 --library 2
expect 2 '--library given twice ("1", then "2")'
run job create remove-server --server=1 --server 1
expect 2 '--server given twice'
run job run "$J" --max-steps 1 --max-steps=2
expect 2 '--max-steps given twice'
run job step "$J" --timeout 5 --timeout 6
expect 2 '--timeout given twice'
run seed --items 1 --items 2
expect 2 '--items given twice'
run --json jobs --limit 1 --limit 2
expect 2
valid_json
unchanged "$before"

finish
