-- One bounded purge transaction (cleanup.purge_step, 080_retention.sql):
-- $1 the age in days a finished job must have (a number, >= 0), $2 the
-- most rows deleted. One row: what it removed.
SELECT (r ->> 'job_id')::bigint AS job_id, coalesce(r ->> 'kind', '') AS kind,
       coalesce(r ->> 'target_name', '') AS target_name,
       coalesce(to_char((r ->> 'finished_at')::timestamptz, 'YYYY-MM-DD"T"HH24:MI:SSTZH:TZM'), '') AS finished_at,
       (r ->> 'manifest')::bigint AS manifest, (r ->> 'retained')::bigint AS retained,
       (r ->> 'steps')::bigint AS steps, (r ->> 'events')::bigint AS events,
       (r ->> 'job_purged')::boolean AS job_purged, (r ->> 'more')::boolean AS more
  FROM cleanup.purge_step(make_interval(secs => $1::double precision * 86400), $2::int) AS r
