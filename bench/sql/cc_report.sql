-- bench_count_cache: the report of every library as `cleanupctl counts`
-- reads it (sql/queries/count_report.sql's source); returns its rows.
SELECT count(*), count(*) FILTER (WHERE state = 'fresh') FROM cleanup.count_report() AS r
