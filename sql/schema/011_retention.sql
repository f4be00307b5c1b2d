-- 011_retention: the retention of finished jobs' manifests and step
-- records (docs/scaling.md; seed 000 names manifest and
-- history retention as open evidence).
--
-- cleanup.jobs.purged_at: when `cleanupctl purge` (cleanup.purge_step,
-- sql/functions/080_retention.sql) removed the job's manifest, step records
-- and retained rows. The job row itself stays (its counters are the
-- record of what the job did); NULL: nothing was purged.
-- jobs_purgeable_idx: the finished jobs not purged yet, oldest first, so
-- that finding the next job to purge reads one index entry however many
-- jobs have been purged before. A running job's row is outside its
-- predicate, so a step's update of the job row never writes to it.

ALTER TABLE cleanup.jobs ADD COLUMN purged_at timestamptz;

CREATE INDEX jobs_purgeable_idx ON cleanup.jobs (finished_at, id)
    WHERE phase IN ('completed', 'cancelled') AND purged_at IS NULL;
