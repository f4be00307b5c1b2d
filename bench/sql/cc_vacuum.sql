-- bench_count_cache: after the load, as autovacuum would: the visibility
-- map for index-only scans, statistics for plans.
VACUUM (ANALYZE) inventory.items
