-- bench_writers: a sync writer's single-row insert into library $1.
INSERT INTO inventory.items (library_id, external_id, title) VALUES ($1::bigint, $2::text, 'bench')
