-- bench_shapes: $1 servers named shape-srv-N; returns their ids.
INSERT INTO inventory.media_servers (name)
SELECT 'shape-srv-' || g FROM generate_series(1, $1::int) g ORDER BY g RETURNING id
