-- 016_writer_guards: what the engine's guards cost a sync writer (issue
-- 22, item 2; docs/benchmarks.md, "Sync writers").
--
-- The external-ID rule of the inventory's CHECK constraint
-- (items_external_id_rule, C10) was not inlined: its body called
-- format(), which is STABLE, and the planner inlines an IMMUTABLE SQL
-- function only when its body is immutable too. So every writer
-- statement ran it through fmgr_sql, which reads the stored body back
-- (stringToNode), plans it and starts an executor for it (perf of a
-- single-row insert: 10-12% of the backend's CPU, on top of the CHECK
-- itself). The same rule, the same messages, with an immutable
-- concatenation: inlined into the constraint's expression, as into
-- job_append's validation. Redefined in a migration, not a function file,
-- since the constraint depends on it (as in 013_boundary.sql). Written
-- to apply again over its own result.
CREATE OR REPLACE FUNCTION cleanup.external_id_problem(x text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT CASE
        WHEN x IS NULL THEN 'must not be null'
        WHEN x = '' THEN 'must not be empty'
        WHEN pg_catalog.octet_length(x) > 256
            THEN 'is ' OPERATOR(pg_catalog.||) pg_catalog.octet_length(x)::pg_catalog.text
                 OPERATOR(pg_catalog.||) ' bytes long; the limit is 256'
        WHEN x ~ '[\x01-\x1f\x7f-\x9f]' THEN 'contains a control character'
        WHEN x ~ '^ | $' THEN 'has a space at its start or end'
        WHEN x ~ '[\u00a0\u00ad\u034f\u061c\u115f\u1160\u1680\u17b4\u17b5\u180b-\u180f\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e007f]'
            THEN 'contains an invisible character (a space other than U+0020, a zero-width, format or '
                 'bidirectional control character, or a filler)'
        ELSE NULL
    END;
END;
