-- bench_writers: a sync writer's batch: one statement inserting the
-- external IDs $2 (a text array) into library $1.
INSERT INTO inventory.items (library_id, external_id, title)
SELECT $1::bigint, x, 'bench' FROM unnest($2::text[]) AS x
