-- Terminates the backend of job $1's runner (issue 11, item 14: the
-- recovery demo from the console), but only when it is still backend $2,
-- the one the operator saw and confirmed: a runner that ended or was
-- replaced meanwhile is left alone (terminated false, holder_pid says who
-- holds the lock now, NULL when nobody). The run loses its connection; its
-- step in flight rolls back; the job resumes from its last committed step
-- under the next runner (S9).
WITH h AS (
    SELECT l.pid
      FROM pg_catalog.pg_locks l
     WHERE l.locktype = 'advisory' AND l.granted
       AND l.database = (SELECT datid FROM pg_catalog.pg_stat_get_activity(pg_catalog.pg_backend_pid()))
       AND l.classid = 1668050546::oid AND l.objid = ($1::bigint % 2147483648)::oid AND l.objsubid = 2
     LIMIT 1)
SELECT (SELECT pid FROM h) AS holder_pid,
       coalesce((SELECT pg_catalog.pg_terminate_backend(h.pid) FROM h WHERE h.pid = $2::int), false) AS terminated
