-- What a purge would remove (cleanup.purge_plan, 080_retention.sql): $1
-- the age in days, $2 the most jobs listed. One row per listed job (one
-- row with a NULL job_id when there is none), each with the totals.
SELECT (p ->> 'jobs_total')::bigint AS jobs_total, (p ->> 'events')::bigint AS events,
       (p ->> 'events_capped')::boolean AS events_capped,
       (x ->> 'job_id')::bigint AS job_id, coalesce(x ->> 'kind', '') AS kind,
       coalesce(x ->> 'target_name', '') AS target_name, coalesce(x ->> 'phase', '') AS phase,
       coalesce(to_char((x ->> 'finished_at')::timestamptz, 'YYYY-MM-DD"T"HH24:MI:SSTZH:TZM'), '') AS finished_at,
       (x ->> 'manifest')::bigint AS manifest, (x ->> 'steps')::bigint AS steps
  FROM cleanup.purge_plan(make_interval(secs => $1::double precision * 86400), $2::int) AS p
  LEFT JOIN LATERAL jsonb_array_elements(p -> 'jobs') AS x ON true
