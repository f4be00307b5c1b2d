-- Unfinished jobs and the $1 most recent ones, the unfinished first (what
-- needs an operator on top), newest first within each, each with the
-- columns of job_get.sql (cleanup.job_text_columns).
SELECT j.*, c.*
  FROM cleanup.jobs AS j
 CROSS JOIN LATERAL cleanup.job_text_columns(j) c
 WHERE j.phase NOT IN ('completed', 'cancelled')
    OR j.id IN (SELECT id FROM cleanup.jobs ORDER BY id DESC LIMIT $1::int)
 ORDER BY j.phase IN ('completed', 'cancelled'), j.id DESC
