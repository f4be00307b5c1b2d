-- 013_boundary: the least-trusted login cannot move cleanup (T1-T8;
-- docs/security.md has the threat model, docs/steps.md the accounting).
--
-- 1. Claims belong to the engine (T1, T2). cleanup.job_claims is the
--    record of every claim a step made: the claimed item, its library, and
--    the xmin of the item version the claim wrote. A claims drain walks
--    this table, never inventory.items.claimed_by (a column a writer could
--    once set), and deletes an item only when it still carries that very
--    version, in the job's scope. items.claimed_by stays as the in-row mark
--    that makes a writer meet the claim in any isolation level; the guards
--    (055_dependents.sql) refuse any change to it that is not a step's.
--    Claims made before this migration: those of running jobs whose item
--    is in the job's scope are recorded; every other mark (a forged claim,
--    or one naming a job that ended or never existed) is cleared.
-- 2. Departures (T7). A row in a job's scope that leaves it before a step
--    reached it (moved out of a fenced library, or deleted by someone else)
--    is recorded by the writer's own statement trigger in
--    cleanup.job_departures; the next step folds them into the job's
--    counters (moved_early, absent_early, which moved and absent include).
--    scope_count is the number of rows in the job's scope when it sealed
--    (prune) or was created (removal): at completion
--        scope_count = deleted + kept + moved + absent.
-- 3. A job a held row or table keeps from finishing says so (T3, T4):
--    blocked_since and blocked_by (who holds what), set by the busy note of
--    its runner, cleared by its next step that makes progress.
-- 4. The audit names the database role (T8): session_user, beside the
--    operator name the caller gave.
-- 5. One external-ID rule, stricter (C10): no whitespace at either end, no
--    invisible characters (Unicode format characters such as zero-width
--    and bidirectional controls, spaces other than U+0020, fillers). IDs
--    written before the rule changed stay valid in the inventory but could
--    never be appended to a manifest: cleanup.legacy_ids lists them and a
--    prune's seal protects them, so no prune deletes a row its traversal
--    could not declare.
-- Written to apply again over its own result (an upgrade test emulates
-- older schemas by removing only what those tests know of).
-- 6. Ids in the engine's key space: engine lock keys hold a server or
--    library id in 40 bits; item ids are positive and leave headroom for
--    the cursor arithmetic (pass starts, ranges). Rows outside it refuse
--    the upgrade (CU420), naming one.

-- 1. Claims.
CREATE TABLE IF NOT EXISTS cleanup.job_claims (
    job_id      bigint NOT NULL REFERENCES cleanup.jobs (id),
    item_id     bigint NOT NULL,
    library_id  bigint NOT NULL,
    claimed_xid xid NOT NULL,
    claimed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, item_id)
);

-- The guard that refuses changes to claimed rows must not see this
-- migration's own repair; 055_dependents.sql creates it again.
DROP TRIGGER IF EXISTS items_claim_guard ON inventory.items;

INSERT INTO cleanup.job_claims (job_id, item_id, library_id, claimed_xid)
SELECT i.claimed_by, i.id, i.library_id, i.xmin
  FROM inventory.items i
  JOIN cleanup.jobs j ON j.id = i.claimed_by
  JOIN inventory.libraries l ON l.id = i.library_id
 WHERE i.claimed_by IS NOT NULL
   AND j.phase IN ('draining', 'finalizing')
   AND (j.library_id = i.library_id OR (j.kind = 'remove-server' AND l.server_id = j.server_id))
ON CONFLICT DO NOTHING;

UPDATE inventory.items i SET claimed_by = NULL
 WHERE i.claimed_by IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM cleanup.job_claims c WHERE c.job_id = i.claimed_by AND c.item_id = i.id);

-- 2. Departures and the scope ledger.
CREATE TABLE IF NOT EXISTS cleanup.job_departures (
    job_id  bigint NOT NULL,
    item_id bigint NOT NULL,
    kind    text NOT NULL CHECK (kind IN ('moved', 'deleted')),
    at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (job_id, item_id)
);

ALTER TABLE cleanup.jobs
    ADD COLUMN IF NOT EXISTS scope_count bigint,
    ADD COLUMN IF NOT EXISTS moved_early bigint NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS absent_early bigint NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS blocked_since timestamptz,
    ADD COLUMN IF NOT EXISTS blocked_by jsonb;
ALTER TABLE cleanup.job_steps
    ADD COLUMN IF NOT EXISTS moved_early int NOT NULL DEFAULT 0 CHECK (moved_early >= 0),
    ADD COLUMN IF NOT EXISTS absent_early int NOT NULL DEFAULT 0 CHECK (absent_early >= 0);
-- A row counted moved or absent before any step visited it is not a visit.
ALTER TABLE cleanup.job_steps DROP CONSTRAINT IF EXISTS job_steps_visit_identity;
ALTER TABLE cleanup.job_steps
    ADD CONSTRAINT job_steps_visit_identity
        CHECK (visited + released + moved_early + absent_early = deleted + moved + absent + retained + claimed);
ALTER TABLE cleanup.jobs DROP CONSTRAINT IF EXISTS jobs_visit_identity;
ALTER TABLE cleanup.jobs
    ADD CONSTRAINT jobs_visit_identity
        CHECK (visited + released + moved_early + absent_early = deleted + moved + absent + retained + claimed);

-- 4. The audit's database role.
ALTER TABLE cleanup.audit
    ADD COLUMN IF NOT EXISTS db_role text NOT NULL DEFAULT session_user CHECK (length(db_role) <= 64);

-- 5. The external-ID rule. Redefined here, not in a function file: the
-- inventory's CHECK constraint depends on it.
CREATE TABLE IF NOT EXISTS cleanup.legacy_ids (
    library_id  bigint NOT NULL,
    external_id text NOT NULL,
    PRIMARY KEY (library_id, external_id)
);

-- The invisible characters: U+00A0 U+00AD U+034F U+061C U+115F-U+1160
-- U+1680 U+17B4-U+17B5 U+180B-U+180F U+2000-U+200F U+2028-U+202F
-- U+205F-U+206F U+3000 U+3164 U+FEFF U+FFA0 U+FFF9-U+FFFB U+E0000-U+E007F.
-- The C pre-check (cleanup_external_id_check, core/src/job.c) holds the
-- same list and is fuzzed against this definition. A SQL-standard body
-- (BEGIN ATOMIC): its names and operators are bound when it is created,
-- so no caller's search_path can change what it means (T5), and it stays
-- inlinable.
CREATE OR REPLACE FUNCTION cleanup.external_id_problem(x text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT CASE
        WHEN x IS NULL THEN 'must not be null'
        WHEN x = '' THEN 'must not be empty'
        WHEN pg_catalog.octet_length(x) > 256
            THEN pg_catalog.format('is %s bytes long; the limit is 256', pg_catalog.octet_length(x))
        WHEN x ~ '[\x01-\x1f\x7f-\x9f]' THEN 'contains a control character'
        WHEN x ~ '^ | $' THEN 'has a space at its start or end'
        WHEN x ~ '[\u00a0\u00ad\u034f\u061c\u115f\u1160\u1680\u17b4\u17b5\u180b-\u180f\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e007f]'
            THEN 'contains an invisible character (a space other than U+0020, a zero-width, format or '
                 'bidirectional control character, or a filler)'
        ELSE NULL
    END;
END;

-- IDs already in the inventory that the new rule refuses: kept (a prune
-- seal protects them, 030_jobs.sql), never pruned. Their rows can no
-- longer be updated or moved (the CHECK constraint checks each new row
-- version); a removal deletes them as any other.
INSERT INTO cleanup.legacy_ids (library_id, external_id)
SELECT i.library_id, i.external_id FROM inventory.items i
 WHERE cleanup.external_id_problem(i.external_id) IS NOT NULL
ON CONFLICT DO NOTHING;

-- 6. The key space: servers and libraries in 40 bits (cleanup.lock_key),
-- items positive, below 2^62.
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT 'server' AS what, id FROM inventory.media_servers WHERE id < 1 OR id > 1099511627775
             UNION ALL
             SELECT 'library', id FROM inventory.libraries WHERE id < 1 OR id > 1099511627775
             UNION ALL
             SELECT 'item', id FROM inventory.items WHERE id < 1 OR id > 4611686018427387903
             LIMIT 1 LOOP
        RAISE EXCEPTION 'the inventory holds % id %, outside the engine''s key space; nothing was changed', r.what, r.id
            USING ERRCODE = 'CU420',
                  DETAIL = 'server and library ids are 1 to 2^40-1 (engine lock keys hold them in 40 bits); item ids are 1 to 2^62-1',
                  HINT = 'give the row an id inside the key space (its dependents with it), then install again';
    END LOOP;
END $$;
ALTER TABLE inventory.media_servers DROP CONSTRAINT IF EXISTS media_servers_id_key_space;
ALTER TABLE inventory.libraries DROP CONSTRAINT IF EXISTS libraries_id_key_space;
ALTER TABLE inventory.items DROP CONSTRAINT IF EXISTS items_id_key_space;
ALTER TABLE inventory.media_servers
    ADD CONSTRAINT media_servers_id_key_space CHECK (id BETWEEN 1 AND 1099511627775);
ALTER TABLE inventory.libraries
    ADD CONSTRAINT libraries_id_key_space CHECK (id BETWEEN 1 AND 1099511627775);
ALTER TABLE inventory.items
    ADD CONSTRAINT items_id_key_space CHECK (id BETWEEN 1 AND 4611686018427387903);
