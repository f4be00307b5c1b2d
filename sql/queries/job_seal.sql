SELECT j.*, cleanup.job_json(j)::text AS json FROM cleanup.job_seal($1::bigint, $2::bigint) AS j
