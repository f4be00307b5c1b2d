-- 020_external_id_check_inline: the inventory's external-ID CHECK with the
-- rule written out (C10; docs/benchmarks.md, "The external-ID CHECK").
--
-- items_external_id_rule was CHECK (cleanup.external_id_problem(x) IS
-- NULL). PostgreSQL prepares a table's CHECK expressions once per
-- statement, and inlining that SQL function read its stored body back
-- (stringToNode) and folded the CASE with its messages every time: 354k
-- instructions of a single-row insert's 918k (callgrind), more than every
-- trigger of the engine together (288k). The same rule as a plain
-- expression, with no function and no messages: 126k. Messages stay with
-- cleanup.external_id_problem (job_append, the count cache), which the
-- expression must match: test_C10_check_and_rule_agree compares them over
-- every code point of the planes the rule names.
--
-- NOT VALID, never validated: rows written before 013_boundary.sql's
-- stricter rule may break it (cleanup.legacy_ids keeps them, never
-- pruned), as they could under the old constraint, which checked only new
-- row versions since then; NOT VALID also keeps the upgrade from scanning
-- the inventory under its lock. Every insert and update is checked, as
-- before. Operators and functions are written with their schema (T5),
-- though a constraint binds them when it is created. Written to apply
-- again over its own result.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_constraint c
                WHERE c.conrelid = 'inventory.items'::regclass AND c.conname = 'items_external_id_rule'
                  AND pg_catalog.pg_get_constraintdef(c.oid) LIKE '%external_id_problem%') THEN
        ALTER TABLE inventory.items DROP CONSTRAINT items_external_id_rule;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint c
                    WHERE c.conrelid = 'inventory.items'::regclass AND c.conname = 'items_external_id_rule') THEN
        ALTER TABLE inventory.items ADD CONSTRAINT items_external_id_rule CHECK (
            external_id IS NOT NULL
            AND external_id OPERATOR(pg_catalog.<>) ''
            AND pg_catalog.octet_length(external_id) OPERATOR(pg_catalog.<=) 256
            AND external_id OPERATOR(pg_catalog.!~) '[\x01-\x1f\x7f-\x9f]'
            AND external_id OPERATOR(pg_catalog.!~) '^ | $'
            AND external_id OPERATOR(pg_catalog.!~) '[\u00a0\u00ad\u034f\u061c\u115f\u1160\u1680\u17b4\u17b5\u180b-\u180f\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e007f]'
        ) NOT VALID;
    END IF;
END $$;
