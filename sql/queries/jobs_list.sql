-- Unfinished jobs and the $1 most recent ones, newest first.
SELECT j.*, cleanup.job_json(j)::text AS json
  FROM cleanup.jobs AS j
 WHERE j.phase NOT IN ('completed', 'cancelled')
    OR j.id IN (SELECT id FROM cleanup.jobs ORDER BY id DESC LIMIT $1::int)
 ORDER BY j.id DESC
