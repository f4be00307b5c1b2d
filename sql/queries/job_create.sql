SELECT j.*, cleanup.job_json(j)::text AS json
  FROM cleanup.job_create($1, $2::bigint, $3) AS j
