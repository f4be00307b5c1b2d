SELECT cleanup.jobs_json($1::int)::text AS json
