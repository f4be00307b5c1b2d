-- 021_engine_keys: cleanup.job_retained and cleanup.job_claims without
-- their foreign keys to cleanup.jobs, as cleanup.manifest since migration
-- 005 (docs/data-model.md, "The manifest").
--
-- Their rows are written only by a step (step_drain, claims_drain), which
-- holds its job's row FOR UPDATE (cleanup.runner_step_check) in the same
-- transaction, and jobs are never deleted: retention marks them purged
-- (080_retention.sql) after deleting their retained rows. The keys checked
-- nothing those rules do not already hold, and each inserted row paid
-- PostgreSQL's check for it: a SELECT ... FOR KEY SHARE of the job row,
-- 4.3 us a row of a 26-row insert (10,400 rows: 77-85 ms with the key,
-- 35-40 ms without). job_steps keeps its key: one row a step.
ALTER TABLE cleanup.job_retained DROP CONSTRAINT IF EXISTS job_retained_job_id_fkey;
ALTER TABLE cleanup.job_claims DROP CONSTRAINT IF EXISTS job_claims_job_id_fkey;
