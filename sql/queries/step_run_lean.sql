-- step_run without the JSON document: the run loop's per-step call.
SELECT s.*, s.xact_id IS DISTINCT FROM pg_current_xact_id_if_assigned() AS replayed
  FROM cleanup.job_step($1::bigint, $2::int, $3::int, $4::bigint) AS s
