-- bench_count_cache: the exact count of library $1, for comparison.
SELECT count(*) FROM inventory.items WHERE library_id = $1::bigint
