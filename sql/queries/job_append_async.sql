-- One append call of a pipelined run (cleanup_job_append_many) whose
-- commit does not wait for its WAL flush: synchronous_commit off for this
-- call's transaction only. The run's last call is job_append_lean.sql,
-- whose synchronous commit waits for the WAL up to its commit record,
-- which follows every earlier call's (the WAL is one sequence), so nothing
-- of the run is reported before it is durable (docs/benchmarks-append.md).
-- The call is as atomic, validated, counted and idempotent as any.
SELECT r.added, r.duplicates, (r.job).manifest_count AS manifest_count,
       pg_catalog.set_config('synchronous_commit', 'off', true) AS commit_mode
  FROM cleanup.job_append($1::bigint, $2::text[]) AS r
