-- Runs step $2 of job $1 (one transaction, one round trip); $3 busy answers
-- the caller could not record; $4 the token of the caller's runner lease
-- (renewed in the step's transaction). A row committed by another transaction is a
-- replay of a recorded step (S8).
SELECT s.*, r.replayed,
       (cleanup.step_json(s) || jsonb_build_object('replayed', r.replayed,
                                                   'preview', false))::text AS json
  FROM cleanup.job_step($1::bigint, $2::int, $3::int, $4::bigint) AS s
 CROSS JOIN LATERAL (SELECT s.xact_id IS DISTINCT FROM pg_current_xact_id_if_assigned() AS replayed) r
