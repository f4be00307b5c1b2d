-- kill-runner, server-crash (cleanupctl demo): takes failpoint $1's
-- advisory lock for the session (lab/src/hold.c), so that a runner started
-- with that point on (PGOPTIONS cleanup.failpoints) waits inside its next
-- step, its work written and not committed (sql/functions/012_failpoints.sql).
SELECT 1 AS held FROM (SELECT pg_advisory_lock(cleanup.failpoint_key($1::text))) AS taken
