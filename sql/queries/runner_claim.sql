-- The runner lock of job $1 (issue 11, item 10): a session-level advisory
-- lock, two-key form (classid 1668050546 "clnr", objid the job id modulo
-- 2^31), taken without waiting by the connection that runs the job
-- (cleanup_job_run) and held until the run ends or its session does: a
-- killed runner's lock goes with its backend. Other sessions see it in
-- pg_locks (mon_jobs.sql shows it as the job's runner). claimed is false
-- when another session holds it; the holder's backend pid, application,
-- host and connection time come along to name it.
WITH c AS (SELECT pg_catalog.pg_try_advisory_lock(1668050546, ($1::bigint % 2147483648)::int) AS claimed)
SELECT c.claimed, h.pid AS holder_pid, h.application_name AS holder_app, h.client AS holder_client,
       to_char(h.backend_start, 'YYYY-MM-DD HH24:MI:SS') AS holder_since
  FROM c
  LEFT JOIN LATERAL (
        SELECT l.pid, a.application_name, a.backend_start,
               coalesce(a.client_hostname, host(a.client_addr), 'local') AS client
          FROM pg_catalog.pg_locks l
          LEFT JOIN LATERAL pg_catalog.pg_stat_get_activity(l.pid) a ON true
         WHERE NOT c.claimed AND l.locktype = 'advisory' AND l.granted AND l.pid <> pg_catalog.pg_backend_pid()
           AND l.database = (SELECT datid FROM pg_catalog.pg_stat_get_activity(pg_catalog.pg_backend_pid()))
           AND l.classid = 1668050546::oid AND l.objid = ($1::bigint % 2147483648)::oid AND l.objsubid = 2
         LIMIT 1) h ON true
