SELECT (r.job).*, cleanup.job_json(r.job)::text AS json, r.added, r.duplicates
  FROM cleanup.job_append($1::bigint, $2::text[]) AS r
