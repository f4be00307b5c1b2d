-- bench_workers, A/B only: the 4-runner run once more without the
-- per-row NOTIFY of cleanup.jobs (030_jobs.sql's jobs_notify), to measure
-- what the NOTIFY queue lock costs. On a copy of the template; never in a
-- real database.
ALTER TABLE cleanup.jobs DISABLE TRIGGER jobs_notify
