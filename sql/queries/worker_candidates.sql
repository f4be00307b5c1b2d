-- cleanupctl worker (issue 10, item 5): the runnable jobs that no runner
-- holds now, oldest first, at most $2, of the servers in $1 (an empty
-- array: every server). Runnable: draining or finalizing (collecting and
-- paused jobs wait for their seal; completed and cancelled are done). The
-- partial index jobs_one_unfinished_per_server holds exactly the unfinished
-- jobs, at most one a server (C7), so this reads one short index, never the
-- history. A runner is the holder of the job's runner lock
-- (runner_claim.sql: classid 1668050546, objid the job id modulo 2^31,
-- objsubid 2), read from pg_locks as mon_jobs.sql reads it, with no shared
-- catalog (pg_database) in the plan.
--
-- A list, not a claim: the claim is pg_try_advisory_lock on the connection
-- that will run the job (cleanup_job_runner_claim), atomic and never
-- waiting, so two workers reading the same list cannot both take a job; the
-- loser moves on to its next candidate. No FOR UPDATE SKIP LOCKED on the
-- job row: a row lock would be a transaction's, not the run's, and the
-- steps themselves take the job row FOR UPDATE (L1).
SELECT j.id, j.server_id, j.kind, j.phase
  FROM cleanup.jobs j
 WHERE j.phase NOT IN ('completed', 'cancelled')
   AND j.phase IN ('draining', 'finalizing')
   AND (cardinality($1::bigint[]) = 0 OR j.server_id = ANY ($1::bigint[]))
   AND NOT EXISTS (
        SELECT 1
          FROM pg_catalog.pg_locks l
         WHERE l.locktype = 'advisory' AND l.granted
           AND l.database = (SELECT datid FROM pg_catalog.pg_stat_get_activity(pg_catalog.pg_backend_pid()))
           AND l.classid = 1668050546::oid AND l.objid = (j.id % 2147483648)::oid AND l.objsubid = 2)
 ORDER BY j.id
 LIMIT $2::int
