-- bench_rss: the console's connections to this database now (it is
-- showing data, not an error).
SELECT count(*) FROM pg_stat_activity
 WHERE datname = current_database() AND application_name LIKE 'cleanupctl:console%'
