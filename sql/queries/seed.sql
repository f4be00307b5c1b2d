SELECT (r->>'servers')::int AS servers, (r->>'libraries')::int AS libraries,
       (r->>'items')::bigint AS items
  FROM cleanup.seed_demo($1::int, $2::int, $3::bigint) AS r
