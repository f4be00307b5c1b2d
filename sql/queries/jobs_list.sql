-- Unfinished jobs and the $1 most recent ones, newest first; a job its
-- runner found held up (T3) with who holds it, as in job_get.sql.
SELECT j.*, cleanup.job_json(j)::text AS json,
       CASE WHEN j.blocked_since IS NOT NULL THEN cleanup.holders_text(j.blocked_by) END AS blocked_text
  FROM cleanup.jobs AS j
 WHERE j.phase NOT IN ('completed', 'cancelled')
    OR j.id IN (SELECT id FROM cleanup.jobs ORDER BY id DESC LIMIT $1::int)
 ORDER BY j.id DESC
