SELECT j.*, cleanup.job_json(j)::text AS json FROM cleanup.job_transition($1::bigint, $2) AS j
