-- Runs step $2 of job $1 (one transaction, one round trip); $3 busy answers
-- the caller could not record. A row committed by another transaction is a
-- replay of a recorded step (S8).
SELECT s.*, r.replayed,
       (cleanup.step_json(s) || jsonb_build_object('replayed', r.replayed,
                                                   'preview', false))::text AS json
  FROM cleanup.job_step($1::bigint, $2::int, $3::int) AS s
 CROSS JOIN LATERAL (SELECT s.xact_id IS DISTINCT FROM pg_current_xact_id_if_assigned() AS replayed) r
