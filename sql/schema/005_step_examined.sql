-- 005_step_examined: a step examines more rows of its range than it visits
-- (docs/steps.md, "Budget"), and the manifest loses its foreign key.
--
-- Seed 000 ("Research and alternatives"): "The row budget limits visited
-- candidates and deleted source/parent rows per step, not index entries
-- examined". A seen row (prune: external ID in the manifest) is not a
-- deletion candidate: the step passes over it (counted as kept) without
-- locking, re-reading or comparing it. So, per step:
--   examined  rows of the range the step's cursor passed (at most 1024);
--   visited   deletion candidates locked, re-read and compared (at most
--             128), each with exactly one verdict;
--   kept      examined rows passed over because they were seen;
--   mutations domain mutations (at most 128).
-- Before this migration `visited` counted kept rows too; recorded steps and
-- job counters are rewritten to the new accounting (examined = the old
-- visited, visited = the old visited minus kept), which keeps every total.
-- The single-transaction comparison mode stays the one exception to the
-- bounds and records its true counts.

ALTER TABLE cleanup.job_steps DROP CONSTRAINT job_steps_visit_identity;
ALTER TABLE cleanup.job_steps ADD COLUMN examined int NOT NULL DEFAULT 0;
UPDATE cleanup.job_steps SET examined = visited, visited = visited - kept
 WHERE visited <> 0 OR kept <> 0;
ALTER TABLE cleanup.job_steps
    ADD CONSTRAINT job_steps_visit_identity CHECK (visited = deleted + moved + absent + retained),
    ADD CONSTRAINT job_steps_examine_identity CHECK (examined = visited + kept),
    ADD CONSTRAINT job_steps_row_budget
        CHECK (action = 'single-transaction' OR (visited <= 128 AND examined <= 1024));

ALTER TABLE cleanup.jobs ADD COLUMN examined bigint NOT NULL DEFAULT 0;
UPDATE cleanup.jobs SET examined = visited, visited = visited - kept
 WHERE visited <> 0 OR kept <> 0;
ALTER TABLE cleanup.jobs
    ADD CONSTRAINT jobs_visit_identity CHECK (visited = deleted + moved + absent + retained),
    ADD CONSTRAINT jobs_examine_identity CHECK (examined = visited + kept);

-- cleanup.manifest.job_id without a foreign key (docs/data-model.md,
-- "Manifest"): its rows are written only by cleanup.job_append, which holds
-- the job row FOR UPDATE and checks the job's kind and phase first, and jobs
-- are never deleted. The key's 128 row checks per append call cost about a
-- quarter of the call's server time.
ALTER TABLE cleanup.manifest DROP CONSTRAINT IF EXISTS manifest_job_id_fkey;

-- The final absence check (S6) reads the library in pages in external ID
-- order, merged with the manifest's primary key (docs/steps.md, "Final
-- absence check"): its position is an external ID. NULL: from the start.
ALTER TABLE cleanup.jobs ADD COLUMN check_cursor text;
ALTER TABLE cleanup.job_steps
    ADD COLUMN check_from text,
    ADD COLUMN check_to text;

-- The DDL watch (event triggers) as it was when the contract was recorded:
-- every step trusts the dirty mark only while the live watch still matches
-- this (sql/functions/095_contract.sql); NULL when there was no complete
-- watch, and every step compares the contract in full.
ALTER TABLE cleanup.schema_contract ADD COLUMN watch_state text;
