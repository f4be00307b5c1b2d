-- bench_count_cache: the largest library id so far (0 when none).
SELECT coalesce(max(id), 0) FROM inventory.libraries
