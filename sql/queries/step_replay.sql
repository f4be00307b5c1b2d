-- The recorded result of committed step $2 of job $1 (S8); reads only.
SELECT s.*, true AS replayed,
       (cleanup.step_json(s) || jsonb_build_object('replayed', true,
                                                   'preview', false))::text AS json
  FROM cleanup.job_step_replay($1::bigint, $2::int) AS s
