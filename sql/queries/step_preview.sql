-- What the next step of job $1 would do; run inside a READ ONLY transaction
-- that is rolled back.
SELECT s.*, false AS replayed,
       (cleanup.step_json(s) || jsonb_build_object('replayed', false,
                                                   'preview', true))::text AS json
  FROM cleanup.job_step_preview($1::bigint) AS s
