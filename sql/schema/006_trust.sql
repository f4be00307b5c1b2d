-- 006_trust: T1-T8, "no accepted write is ever lost".
--
-- 1. Protected writes (C9, a deliberate strengthening of seed 000). A
--    prune's manifest describes a traversal that began before the job was
--    created; writes the database accepts into the library while the job
--    collects (inserts, moves in, updates) cannot be in it. The admission
--    triggers record the external IDs of such rows in the job's manifest
--    as `protected`, so the job keeps them, whatever writer wrote them.
--    The library's admission row names the collecting job
--    (collecting_job); job_create sets it under FOR UPDATE NOWAIT, so no
--    admitted write is in flight across the moment collecting begins.
--    Seal compares the expected count with the seen (not protected) IDs
--    and records how many were protected.
-- 2. One external-ID rule (C10): the inventory accepts exactly what the
--    manifest accepts, by the same definition, cleanup.external_id_problem
--    (defined here, because a CHECK constraint needs it before the
--    function files run; a later change of the rule is a migration).
-- 3. Engine locks a role must be granted (L1): the per-
--    server coordinator lock and the per-library lock were advisory keys
--    any login role could take (blocking all cleanup) and that the parent
--    guards accepted when self-taken. They are now row locks on
--    cleanup.engine_locks, a table only the engine's functions reach; a
--    guard verifies that this transaction locked the row (its xmax).

ALTER TABLE cleanup.library_admission ADD COLUMN collecting_job bigint;
ALTER TABLE cleanup.manifest ADD COLUMN protected boolean NOT NULL DEFAULT false;
ALTER TABLE cleanup.jobs ADD COLUMN protected bigint NOT NULL DEFAULT 0;
-- Jobs collecting at the upgrade protect from now on.
UPDATE cleanup.library_admission a SET collecting_job = j.id
  FROM cleanup.jobs j
 WHERE j.kind = 'prune' AND j.phase IN ('collecting', 'paused') AND j.library_id = a.library_id;

-- Validates one external ID; NULL when good, else the rule it breaks. The
-- one definition of the rule: the manifest (cleanup.job_append) and the
-- inventory (items_external_id_rule) both use it; the C pre-check
-- (cleanup_external_id_check) mirrors it and is fuzzed against it.
CREATE OR REPLACE FUNCTION cleanup.external_id_problem(x text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN x IS NULL THEN 'must not be null'
        WHEN x = '' THEN 'must not be empty'
        WHEN octet_length(x) > 256 THEN format('is %s bytes long; the limit is 256', octet_length(x))
        WHEN x ~ '[\x01-\x1f\x7f-\x9f]' THEN 'contains a control character'
        ELSE NULL
    END
$$;

ALTER TABLE inventory.items DROP CONSTRAINT IF EXISTS items_external_id_check;
ALTER TABLE inventory.items ADD CONSTRAINT items_external_id_rule
    CHECK (cleanup.external_id_problem(external_id) IS NULL);

CREATE TABLE cleanup.engine_locks (
    key bigint PRIMARY KEY      -- cleanup.lock_key(namespace, id): 1 coordinator of a server, 2 library
);
INSERT INTO cleanup.engine_locks (key)
SELECT (1::bigint << 40) | id FROM inventory.media_servers
UNION ALL
SELECT (2::bigint << 40) | id FROM inventory.libraries
ON CONFLICT DO NOTHING;
