-- Telemetry of job $1's recorded steps (cleanup.job_steps), in milliseconds.
-- Lock holds and durations are those of the bounded steps (drain, pass,
-- finalize); the final absence check's pages (reads of 10,000 rows) are
-- reported apart.
SELECT count(*) AS steps,
       coalesce(sum(examined), 0) AS examined,
       coalesce(sum(visited), 0) AS visited,
       coalesce(sum(deleted), 0) AS deleted,
       coalesce(max(mutations), 0) AS max_mutations,
       coalesce(max(visited), 0) AS max_visited,
       coalesce(max(examined), 0) AS max_examined,
       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY lock_hold_ms) FILTER (WHERE action <> 'final-check'), 0) AS lock_p50,
       coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY lock_hold_ms) FILTER (WHERE action <> 'final-check'), 0) AS lock_p99,
       coalesce(max(lock_hold_ms) FILTER (WHERE action <> 'final-check'), 0) AS lock_max,
       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE action <> 'final-check'), 0) AS dur_p50,
       coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE action <> 'final-check'), 0) AS dur_p99,
       coalesce(max(duration_ms) FILTER (WHERE action <> 'final-check'), 0) AS dur_max,
       count(*) FILTER (WHERE action = 'final-check') AS check_steps,
       coalesce(sum(duration_ms) FILTER (WHERE action = 'final-check'), 0) AS check_ms,
       coalesce(max(lock_hold_ms) FILTER (WHERE action = 'final-check'), 0) AS check_lock_max,
       coalesce(max(parent_lock_ms), -1) AS parent_lock_max,
       count(parent_lock_ms) AS parent_steps
  FROM cleanup.job_steps WHERE job_id = $1
