-- bench_workers: a fresh view of the statistics (the worker's backends
-- flushed theirs when they exited).
SELECT pg_stat_clear_snapshot()
