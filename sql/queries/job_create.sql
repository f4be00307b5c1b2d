SELECT j.*, cleanup.job_json(j)::text AS json
  FROM cleanup.job_create($1, $2::bigint, coalesce($3, 'bounded')) AS j
