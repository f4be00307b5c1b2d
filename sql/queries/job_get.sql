-- Job $1 with its JSON document and, when its runner found it held up
-- (T3), who holds it, as a line of text (cleanup.holders_text).
SELECT j.*, cleanup.job_json(j)::text AS json,
       CASE WHEN j.blocked_since IS NOT NULL THEN cleanup.holders_text(j.blocked_by) END AS blocked_text
  FROM cleanup.jobs AS j WHERE j.id = $1::bigint
