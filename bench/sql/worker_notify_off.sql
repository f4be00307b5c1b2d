-- bench_workers, A/B only: the 4-runner run once more without the NOTIFY
-- of cleanup.jobs' changes (030_jobs.sql's jobs_notify and
-- jobs_notify_update triggers), to measure what the NOTIFY queue lock
-- costs. On a copy of the template; never in a real database.
ALTER TABLE cleanup.jobs DISABLE TRIGGER jobs_notify, DISABLE TRIGGER jobs_notify_update
