-- 015_runner_lease: the runner lease (F2; docs/fleet.md,
-- "One runner per job"). One row per job that a runner drives now: who
-- (host, OS pid, application: the process an operator can stop), the
-- backend of its last statement, and until when the lease holds. The
-- lease is renewed inside every step's own transaction (cleanup.job_step
-- with the holder's token) and by a heartbeat while the runner waits; a
-- second runner is refused naming the holder; a lease past its expiry, or
-- one whose direct backend is proven gone, is taken over by the next
-- runner, which records "runner lost" in cleanup.events. A row, not a
-- session lock: it works the same through a transaction-pooling pooler,
-- and nothing is left on a pooled server connection.
--
-- Written to apply again over its own result.
CREATE TABLE IF NOT EXISTS cleanup.job_runners (
    -- No foreign key to cleanup.jobs: its check would take the job row
    -- FOR KEY SHARE, so a session holding that row (a writer, a DBA's
    -- psql) would make opening a lease wait. runner_open checks the job.
    job_id       bigint PRIMARY KEY,
    token        bigint NOT NULL,            -- the holder's proof, random per open
    host         text NOT NULL CHECK (length(host) <= 255),
    os_pid       int NOT NULL,
    application  text NOT NULL CHECK (length(application) <= 64),
    direct       boolean NOT NULL,           -- false behind a pooler: backend_pid is a pooled connection's
    backend_pid  int,                        -- the backend of the holder's last statement
    server_start timestamptz,                -- pg_postmaster_start_time() of that backend's server
    started_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    renewed_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    ttl          interval NOT NULL CHECK (ttl >= interval '1 second' AND ttl <= interval '1 hour'),
    last_step    int
);
