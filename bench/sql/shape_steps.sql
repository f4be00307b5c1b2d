-- bench_shapes: step durations of job $1 (server side, ms): drain and pass
-- steps as a sorted array, final-check pages apart.
SELECT coalesce(array_agg(duration_ms ORDER BY duration_ms) FILTER (WHERE action IN ('drain', 'pass')), '{}') AS durs,
       count(*) FILTER (WHERE action = 'final-check') AS pages,
       coalesce(max(duration_ms) FILTER (WHERE action = 'final-check'), 0) AS page_max,
       count(*) FILTER (WHERE action = 'pass') AS pass_steps,
       count(*) AS steps
  FROM cleanup.job_steps WHERE job_id = $1
