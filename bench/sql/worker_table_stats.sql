-- bench_workers: row updates per table of the engine in this database
-- since it was created (a copy of the template: the counters start at 0)
-- and the rows of the tables a step updates: updates spread over one row
-- per job (jobs) or per library (library_stats) are not a shared hot row;
-- many updates of a table of one row would be.
SELECT s.relname, s.n_tup_upd, s.n_tup_ins,
       CASE s.schemaname || '.' || s.relname
            WHEN 'cleanup.jobs' THEN (SELECT count(*) FROM cleanup.jobs)
            WHEN 'cleanup.library_stats' THEN (SELECT count(*) FROM cleanup.library_stats)
            WHEN 'cleanup.library_admission' THEN (SELECT count(*) FROM cleanup.library_admission)
            WHEN 'cleanup.server_admission' THEN (SELECT count(*) FROM cleanup.server_admission)
            WHEN 'cleanup.engine_locks' THEN (SELECT count(*) FROM cleanup.engine_locks)
       END AS nrows
  FROM pg_stat_user_tables s
 WHERE s.schemaname IN ('cleanup', 'inventory') AND s.n_tup_upd > 0
 ORDER BY s.n_tup_upd DESC
