SELECT (r->>'servers')::int AS servers, (r->>'libraries')::int AS libraries,
       (r->>'items')::bigint AS items, (r->>'dependents')::bigint AS dependents
  FROM cleanup_lab.seed_demo($1::int, $2::int, $3::bigint, $4::int) AS r
