SELECT j.*, cleanup.job_json(j)::text AS json FROM cleanup.jobs AS j WHERE j.id = $1::bigint
