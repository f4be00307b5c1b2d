-- cleanupctl worker: the runnable jobs that no runner
-- holds now, oldest first, at most $2, of the servers in $1 (an empty
-- array: every server). Runnable: draining or finalizing (collecting and
-- paused jobs wait for their seal; completed and cancelled are done). The
-- partial index jobs_one_unfinished_per_server holds exactly the unfinished
-- jobs, at most one a server (C7), so this reads one short index, never the
-- history. A runner is the holder of the job's live runner lease
-- (cleanup.job_runners, 062_runner.sql), as mon_jobs.sql reads it.
--
-- A list, not a claim: the claim is cleanup.runner_open (core/src/runner.c),
-- atomic under the lease row's lock and never waiting for a runner, so two
-- workers reading the same list cannot both take a job; the loser moves on
-- to its next candidate. No FOR UPDATE SKIP LOCKED on the
-- job row: a row lock would be a transaction's, not the run's, and the
-- steps themselves take the job row FOR UPDATE (L1).
SELECT j.id, j.server_id, j.kind, j.phase
  FROM cleanup.jobs j
 WHERE j.phase NOT IN ('completed', 'cancelled')
   AND j.phase IN ('draining', 'finalizing')
   AND (cardinality($1::bigint[]) = 0 OR j.server_id = ANY ($1::bigint[]))
   AND NOT EXISTS (
        SELECT 1 FROM cleanup.job_runners r WHERE r.job_id = j.id AND cleanup.runner_live(r))
 ORDER BY j.id
 LIMIT $2::int
