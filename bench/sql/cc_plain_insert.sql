-- bench_count_cache: a plain SQL writer's batch: items with external IDs
-- $2 (a text array) into library $1, one statement.
INSERT INTO inventory.items (library_id, external_id, title)
SELECT $1::bigint, x, 'bench' FROM unnest($2::text[]) AS x
