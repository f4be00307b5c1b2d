-- The $2 most recent recorded steps of job $1, newest first.
SELECT s.*, false AS replayed,
       (cleanup.step_json(s) || jsonb_build_object('replayed', false,
                                                   'preview', false))::text AS json
  FROM cleanup.job_steps AS s
 WHERE s.job_id = $1::bigint
 ORDER BY s.step_no DESC
 LIMIT least(greatest($2::int, 0), 1000)
