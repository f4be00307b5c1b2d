-- bench_shapes: items of libraries $1 (ids) with $2 items each (parallel
-- arrays), external IDs ext-<library>-<n>. With $3 the ids interleave
-- across the libraries (libraries synced at the same time); else each
-- library's ids are one range.
INSERT INTO inventory.items (library_id, external_id, title)
SELECT l.id, 'ext-' || l.id || '-' || g, 'T'
  FROM unnest($1::bigint[], $2::bigint[]) AS l(id, n)
  CROSS JOIN LATERAL generate_series(1, l.n) AS g
 ORDER BY CASE WHEN $3::boolean THEN g END, l.id, g
