-- bench_workers: the jobs after a worker's run: how many completed, the
-- fewest and most items one deleted, the steps recorded, and whether every
-- job's counters equal the sum of its step records (no step twice).
SELECT count(*) FILTER (WHERE j.phase = 'completed') AS completed,
       min(j.deleted) AS min_deleted, max(j.deleted) AS max_deleted,
       sum(j.step_no) AS steps,
       bool_and(j.deleted = (SELECT coalesce(sum(s.deleted), 0) FROM cleanup.job_steps s WHERE s.job_id = j.id)
                AND j.step_no = (SELECT count(*) FROM cleanup.job_steps s WHERE s.job_id = j.id)) AS consistent
  FROM cleanup.jobs j
