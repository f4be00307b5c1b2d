-- 010_step_runner: coalesced step notifications and the runner of each
-- step.
--
-- 1. cleanup.jobs.notified_at: when a step of the job last asked for a
--    notification. A step's update of the job row sets it to
--    clock_timestamp() only when it is NULL or at least 100 ms old (or the
--    phase or pass changes), and jobs_notify_update
--    (sql/functions/030_jobs.sql) notifies a step's update only when it
--    changed notified_at, the phase or the pass: a job's steps notify at
--    most about ten times a second instead of once a step (each pg_notify
--    takes the cluster-wide NOTIFY queue lock at commit, which serialised
--    every runner's steps: docs/benchmarks-workers.md). Not indexed, so a
--    step's update stays HOT. NULL: no step has notified yet (or the job
--    predates this migration).
-- 2. cleanup.job_steps.runner_pid / runner_app: the backend process id
--    (pg_backend_pid()) and application_name (its first 64 characters;
--    '' when the session set none) of the session that ran and committed
--    the step. A replay returns the recorded row, so they name the
--    original runner, never the replaying one. NULL in both for steps
--    recorded before this migration.

ALTER TABLE cleanup.jobs ADD COLUMN notified_at timestamptz;

ALTER TABLE cleanup.job_steps
    ADD COLUMN runner_pid int,
    ADD COLUMN runner_app text CONSTRAINT job_steps_runner_app_length CHECK (char_length(runner_app) <= 64);
