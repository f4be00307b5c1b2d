-- The runner lock of job $1 behind a connection pooler (issue 20): the
-- lock of runner_claim.sql (same keys, so pg_locks, the console, `locks`
-- and the one-runner rule see no difference), taken transaction-scoped by
-- a connection of its own that keeps that transaction open for the whole
-- run (step.c). A pooler pins a server connection to an open transaction,
-- in session and in transaction pooling alike, and the lock ends with
-- that transaction: ROLLBACK at the end of the run, or the connection's
-- end; never a session lock left on a pooled server connection. The
-- transaction takes no snapshot past this statement (READ COMMITTED) and
-- no transaction id, so holding it open holds back no vacuum.
WITH c AS (SELECT pg_catalog.pg_try_advisory_xact_lock(1668050546, ($1::bigint % 2147483648)::int) AS claimed)
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
