#!/usr/bin/env bash
# plpgsql_check over every engine function.
#
# The schema goes into a scratch database with `cleanupctl install` (and the
# lab's functions, schema cleanup_lab, with the lab's step), then
# CREATE EXTENSION plpgsql_check (Debian: postgresql-15-plpgsql-check, which
# `make test` installs) and plpgsql_check_function_tb() on every PL/pgSQL
# function in the schemas cleanup, inventory and cleanup_lab: plain functions alone,
# trigger functions once per table that has a trigger calling them (the
# check needs the table to know NEW and OLD). The default checks run
# (errors, other warnings, extra warnings such as unused variables or
# parameters; no performance or security hints). Any finding fails the
# test unless tests/cli/plpgsql_check.allow lists it with a reason.
#
# Deterministic: the result depends only on the SQL in sql/ and the
# plpgsql_check version; no timing is involved. An allowlist entry that no
# longer matches is reported as stale but does not fail (SQL is edited on
# several branches at once; a fix must not break the build).
source "$(dirname "$0")/lib_foundation.sh"

ALLOW="$CLEANUP_SOURCE_DIR/tests/cli/plpgsql_check.allow"
DBNAME=cleanup_lab_plpgsql_check

db_fresh "$DBNAME"
if ! psql -X -q -v ON_ERROR_STOP=1 "$DB" -c "CREATE SCHEMA plpgsql_check" -c "CREATE EXTENSION plpgsql_check SCHEMA plpgsql_check" >"$TMPD/ext.log" 2>&1; then
	echo "FAIL: CREATE EXTENSION plpgsql_check: $(cat "$TMPD/ext.log")"
	echo "  install it: apt-get install postgresql-15-plpgsql-check (make test does, as root)"
	exit 1
fi

# One line per finding: function <US> level <US> sqlstate <US> message
# <US> line <US> statement <US> query <US> detail. Unit separators: messages may hold
# '|' and tabs. search_path is pg_catalog alone, so every type and function
# name is schema-qualified and the same whatever the session's setting.
psql -X -q -t -A -v ON_ERROR_STOP=1 -F $'\x1f' "$DB" >"$TMPD/findings" 2>"$TMPD/check.err" <<'EOF'
SET search_path = pg_catalog;
CREATE TEMP VIEW fn AS
  SELECT p.oid, p.prorettype = 'trigger'::regtype AS is_trigger
  FROM pg_proc p
  JOIN pg_namespace n ON n.oid = p.pronamespace
  JOIN pg_language l ON l.oid = p.prolang
  WHERE l.lanname = 'plpgsql' AND n.nspname IN ('cleanup', 'inventory', 'cleanup_lab')
    AND p.prorettype <> 'event_trigger'::regtype;
WITH target AS (
  SELECT oid, 0::oid AS relid, NULL::name AS oldtable, NULL::name AS newtable FROM fn WHERE NOT is_trigger
  UNION
  SELECT fn.oid, t.tgrelid, max(t.tgoldtable), max(t.tgnewtable)
  FROM fn JOIN pg_trigger t ON t.tgfoid = fn.oid WHERE fn.is_trigger
  GROUP BY fn.oid, t.tgrelid
)
SELECT t.oid::regprocedure::text, c.level, coalesce(c.sqlstate, ''),
       replace(replace(c.message, E'\n', ' '), E'\x1f', ' '),
       coalesce(c.lineno::text, ''), coalesce(c.statement, ''),
       replace(replace(coalesce(c.query, ''), E'\n', ' '), E'\x1f', ' '),
       replace(replace(coalesce(c.detail, ''), E'\n', ' '), E'\x1f', ' ')
FROM target t
CROSS JOIN LATERAL plpgsql_check.plpgsql_check_function_tb(t.oid::regprocedure, t.relid::regclass, fatal_errors => false,
                                        oldtable => t.oldtable, newtable => t.newtable) c
ORDER BY 1, 2, 4, 5;
SELECT 'checked' || chr(31) || count(*) FROM (
  SELECT fn.oid FROM fn WHERE NOT fn.is_trigger
  UNION SELECT fn.oid FROM fn JOIN pg_trigger t ON t.tgfoid = fn.oid) x;
SELECT 'unattached' || chr(31) || fn.oid::regprocedure::text
FROM fn WHERE fn.is_trigger AND NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgfoid = fn.oid);
EOF
if [ $? -ne 0 ]; then
	echo "FAIL: plpgsql_check_function_tb: $(cat "$TMPD/check.err")"
	exit 1
fi

checked=$(awk -F $'\x1f' '$1 == "checked" { print $2 }' "$TMPD/findings")
if ! [ "${checked:-0}" -gt 50 ]; then
	echo "FAIL: only ${checked:-0} PL/pgSQL functions found in schemas cleanup, inventory and cleanup_lab"
	FAILS=$((FAILS + 1))
fi
# A trigger function no trigger uses cannot be checked (no NEW/OLD type):
# named, so it is seen; it does not fail.
awk -F $'\x1f' '$1 == "unattached" { print "note: trigger function without a trigger, not checked: " $2 }' "$TMPD/findings"

# The allowlist: "function | message | reason", '#' comments, blank lines.
# Each entry must have a reason.
: >"$TMPD/allow"
if [ -f "$ALLOW" ]; then
	n=0
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		case "$line" in '' | '#'*) continue ;; esac
		f=$(sed 's/ *| */\x1f/g' <<<"$line")
		IFS=$'\x1f' read -r fn msg reason <<<"$f"
		if [ -z "$fn" ] || [ -z "$msg" ] || [ -z "${reason// /}" ]; then
			echo "FAIL: $ALLOW:$n: not \"function | message | reason\": $line"
			FAILS=$((FAILS + 1))
			continue
		fi
		printf '%s\x1f%s\n' "$fn" "$msg" >>"$TMPD/allow"
	done <"$ALLOW"
fi

# Compare: every finding must be allowed; every allowed entry should match.
awk -F $'\x1f' -v allowfile="$TMPD/allow" -v stale="$TMPD/stale" '
	BEGIN { while ((getline l < allowfile) > 0) { allow[l] = 1 } }
	$1 == "checked" || $1 == "unattached" { next }
	{
		key = $1 "\x1f" $4
		if (key in allow) { used[key] = 1; next }
		key = $1 "\x1f" $4 " (" $8 ")"
		if ($8 != "" && key in allow) { used[key] = 1; next }
		printf "FAIL: %s line %s: %s %s: %s\n", $1, $5, $2, ($3 == "" ? "" : "(" $3 ")"), $4
		if ($6 != "") printf "  statement: %s\n", $6
		if ($7 != "") printf "  query: %s\n", $7
		if ($8 != "") printf "  detail: %s\n", $8
		bad++
	}
	END {
		for (k in allow) if (!(k in used)) { split(k, p, "\x1f"); printf "%s | %s\n", p[1], p[2] > stale }
		exit bad > 0
	}' "$TMPD/findings" || FAILS=$((FAILS + 1))
if [ -s "$TMPD/stale" ]; then
	echo "note: allowlist entries that no longer match (remove them from $ALLOW):"
	sed 's/^/  /' "$TMPD/stale"
fi

psql -X -q "$ADMIN" -c "DROP DATABASE IF EXISTS $DBNAME WITH (FORCE)" >/dev/null 2>&1
if [ "$FAILS" -gt 0 ]; then
	echo "plpgsql_check: findings not in $ALLOW (fix the function, or allowlist it with a reason)"
	exit 1
fi
echo "plpgsql_check: $checked PL/pgSQL functions (and trigger uses) of cleanup, inventory and cleanup_lab: no findings beyond the allowlist"
