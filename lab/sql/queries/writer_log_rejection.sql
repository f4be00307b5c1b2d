-- Logs a rejected sync write to cleanup.events (kind 'rejected') in its own
-- short transaction, naming the job that drains library $1 or $3 (a move's
-- destination; NULL otherwise) when there is one; $2 is the message.
-- Returns that job id (NULL when none).
WITH j AS (
    SELECT (SELECT la.job_id
              FROM cleanup.library_admission la
             WHERE la.library_id IN ($1::bigint, $3::bigint)
               AND la.state = 'draining' AND la.job_id IS NOT NULL
             ORDER BY la.library_id = $3::bigint DESC
             LIMIT 1) AS job_id
)
SELECT j.job_id, cleanup.log_event(j.job_id, 'rejected', $2) IS NULL AS logged
  FROM j
