SELECT cleanup.job_show_json($1::bigint, $2::int)::text AS json
