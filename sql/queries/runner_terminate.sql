-- Stops the runner of job $1 from a console (kill-runner): only when its
-- live lease proves backend $2 is the runner's, the one the operator saw
-- and confirmed (cleanup.runner_stop, 062_runner.sql: direct connection,
-- same server life, the backend there since the last renewal). The lease
-- ends (the runner is refused at its next step) and the backend is
-- terminated in the caller's own rights, so the step in flight rolls back
-- and the job resumes from its last committed step under the next runner
-- (S9). reason: stopped, none, other (holder_pid holds it now), pooled
-- (never terminated: a pooler's server connection is shared).
SELECT s.reason, s.holder_pid, s.holder,
       CASE WHEN s.reason = 'stopped' THEN pg_catalog.pg_terminate_backend(s.holder_pid) ELSE false END AS terminated
  FROM cleanup.runner_stop($1::bigint, $2::int, $3::text) AS s
