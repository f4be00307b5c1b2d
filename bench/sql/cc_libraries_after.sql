-- bench_count_cache: the ids of the libraries above $1, ascending.
SELECT id FROM inventory.libraries WHERE id > $1::bigint ORDER BY id
