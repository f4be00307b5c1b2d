-- bench_writers: settles the heap and the statistics between phases.
VACUUM (ANALYZE) inventory.items
