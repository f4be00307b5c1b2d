#!/bin/bash
# A UTF-8 byte-order mark is never part of an external ID (C10):
# `job append` reading stdin refuses input whose first line starts with
# EF BB BF (exit 2, naming line 1 and the rule) and appends nothing. Before
# the fix the BOM became part of the first ID, which then matched no item:
# the item it was meant to protect was pruned.
. "$(dirname "$0")/lib_foundation.sh"

db_fresh cleanup_lab_t_cli_bom
sql "SELECT cleanup_lab.seed_demo(1, 1, 5)" >/dev/null
J=$(sql "SELECT id FROM cleanup.job_create('prune', 1)")

CURRENT="a BOM on line 1 of stdin is refused, nothing appended"
printf '\xef\xbb\xbfext-1-1\next-1-2\n' >"$TMPD/bom"
before=$(fingerprint)
run_in "$TMPD/bom" job append "$J"
expect 2 "line 1 of stdin" "a byte-order mark is not part of an external ID; save the file without BOM"
same "$(sql "SELECT count(*) FROM cleanup.manifest WHERE job_id = $J")" "0" "IDs appended from BOM input"
unchanged "$before"

CURRENT="the same with --json: one error document"
run_in "$TMPD/bom" --json job append "$J"
expect 2
same "$(jq -c '.error | [.status, .exit_code]' <<<"$OUT")" '["invalid",2]' "BOM error as JSON"
jq -r .error.message <<<"$OUT" | grep -q "byte-order mark" || fail "JSON message lacks the rule ($CURRENT)"
unchanged "$before"

CURRENT="a BOM alone on line 1 (an empty first ID) is refused the same way"
printf '\xef\xbb\xbf\next-1-1\n' >"$TMPD/bom2"
run_in "$TMPD/bom2" job append "$J"
expect 2 "line 1 of stdin" "byte-order mark"
unchanged "$before"

CURRENT="without the BOM the same input appends both IDs"
printf 'ext-1-1\next-1-2\n' >"$TMPD/plain"
run_in "$TMPD/plain" --json job append "$J"
expect 0
same "$(jq -c '[.added, .manifest_count]' <<<"$OUT")" "[2,2]" "append without a BOM"
same "$(sql "SELECT string_agg(external_id, ',' ORDER BY external_id) FROM cleanup.manifest WHERE job_id = $J")" \
	"ext-1-1,ext-1-2" "the manifest holds the IDs without a BOM"

CURRENT="the same bytes after line 1 are the ID rule's business, not the BOM rule's"
printf 'ext-1-1\n\xef\xbb\xbfext-1-2\n' >"$TMPD/bom3"
run_in "$TMPD/bom3" job append "$J"
case "$ERR" in *"byte-order mark"*) fail "a BOM-like prefix on line 2 named as a BOM ($CURRENT)" ;; esac

finish
