-- bench_count_cache: ends every watch (the registry's 32 slots free again).
SELECT count(*) FROM (SELECT cleanup.count_release(slot) FROM cleanup.count_registry
                       WHERE library_id IS NOT NULL) AS x
