-- Unfinished jobs and the $1 most recent ones, the unfinished first (issue
-- 21: what needs an operator on top), newest first within each, each with its
-- JSON document and, from it, who runs it now and how it goes
-- (cleanup.job_live_json) as columns for the text output; a job its runner
-- found held up (T3) with who holds it, as in job_get.sql.
SELECT j.*, x.doc::text AS json,
       (x.doc->'runner'->>'pid')::int AS live_runner_pid, x.doc->'runner'->>'host' AS live_runner_host,
       (x.doc->'runner'->>'os_pid')::int AS live_runner_os_pid,
       x.doc->'runner'->>'application' AS live_runner_app, (x.doc->>'no_runner')::boolean AS live_no_runner,
       (x.doc->>'closed_s')::float8 AS live_closed_s, (x.doc->>'last_step_age_s')::float8 AS live_last_step_age_s,
       (x.doc->>'pace_rows_per_s')::float8 AS live_pace, (x.doc->>'eta_s')::float8 AS live_eta_s,
       CASE WHEN j.blocked_since IS NOT NULL THEN cleanup.holders_text(j.blocked_by) END AS blocked_text
  FROM cleanup.jobs AS j
 CROSS JOIN LATERAL (SELECT cleanup.job_json(j) AS doc) x
 WHERE j.phase NOT IN ('completed', 'cancelled')
    OR j.id IN (SELECT id FROM cleanup.jobs ORDER BY id DESC LIMIT $1::int)
 ORDER BY j.phase IN ('completed', 'cancelled'), j.id DESC
