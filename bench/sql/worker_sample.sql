-- bench_workers: the worker's runner backends now that are running a
-- statement, and for each one waiting for a heavyweight lock (a lock of
-- pg_locks not granted) what it waits for. A shared hot row shows as
-- tuple / transactionid waits on one table; object 0 of pg_database in
-- AccessExclusiveLock is PostgreSQL's NOTIFY queue lock, which every
-- transaction that called pg_notify() takes at commit, one at a time
-- (PreCommit_Notify in src/backend/commands/async.c). pg_locks is read
-- only for a backend that pg_stat_activity shows waiting for a lock (a
-- one-time filter): the sampler runs beside the runners and its own CPU is
-- taken from theirs (bench_workers.c, run_worker).
SELECT count(*) OVER () AS runners, w.kind IS NOT NULL AS waiting, coalesce(w.kind, '') AS kind
  FROM pg_stat_activity a
  LEFT JOIN LATERAL (
        SELECT CASE WHEN l.locktype = 'object' AND l.classid = 'pg_database'::regclass AND l.objid = 0
                    THEN 'the NOTIFY queue lock (object 0 of pg_database, ' || l.mode || ')'
                    WHEN l.relation IS NOT NULL
                    THEN l.locktype || ' on ' || l.relation::regclass::text || ' (' || l.mode || ')'
                    ELSE l.locktype || ' (' || l.mode || ')' END AS kind
          FROM pg_locks l
         WHERE a.wait_event_type = 'Lock' AND l.pid = a.pid AND NOT l.granted
         LIMIT 1) w ON true
 WHERE a.datname = current_database() AND a.application_name LIKE 'cleanupctl:job:%:worker/%'
   AND a.state = 'active'
