-- bench_shapes: $2 libraries on each server of $1, created round-robin
-- across servers (library ids interleave across servers); returns them in
-- id order with their server.
INSERT INTO inventory.libraries (server_id, name)
SELECT s, format('shape-lib-%s-%s', s, k)
  FROM unnest($1::bigint[]) AS s, generate_series(1, $2::int) k
 ORDER BY k, s
RETURNING id, server_id
