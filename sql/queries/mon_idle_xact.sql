-- The console's holders (T3), read with the lock query on
-- its schedule: client backends of this database, other than the
-- console's, that are idle in a transaction older than $1 seconds and
-- hold a lock on a table of the engine or the inventory (listed even when
-- nobody waits for them yet: idle = true), or that block a backend waiting
-- for a lock; each with its login role, application, client, state,
-- transaction age and the tables it holds. Catalog and statistics views
-- only; at most 64 rows, the oldest transactions first.
WITH act AS MATERIALIZED (
    SELECT a.pid, a.usename, a.application_name, a.client_addr, a.client_hostname, a.client_port, a.state,
           a.xact_start, a.wait_event_type
      FROM pg_catalog.pg_stat_activity a
     WHERE a.datname = pg_catalog.current_database()
       AND a.pid <> pg_catalog.pg_backend_pid()
       AND a.backend_type = 'client backend'
), blockers AS (
    SELECT DISTINCT pg_catalog.unnest(pg_catalog.pg_blocking_pids(a.pid)) AS pid
      FROM act a WHERE a.wait_event_type = 'Lock'
), idle AS (
    SELECT a.pid FROM act a
     WHERE a.state LIKE 'idle in transaction%'
       AND a.xact_start < pg_catalog.clock_timestamp() - pg_catalog.make_interval(secs => $1::float8)
), held AS (
    SELECT l.pid,
           pg_catalog.string_agg(DISTINCT pg_catalog.format('%s on %I.%I', l.mode, n.nspname, c.relname), ', ') AS holds
      FROM pg_catalog.pg_locks l
      JOIN pg_catalog.pg_class c ON c.oid = l.relation
      JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE l.locktype = 'relation' AND l.granted
       AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database())
       AND n.nspname IN ('cleanup', 'inventory') AND c.relkind IN ('r', 'p')
       AND l.pid IN (SELECT pid FROM idle UNION ALL SELECT pid FROM blockers)
     GROUP BY l.pid
)
SELECT a.pid,
       coalesce(a.usename::text, '?') AS role,
       left(coalesce(a.application_name, ''), 63) AS application,
       left(CASE WHEN a.client_addr IS NULL AND a.client_port = -1 THEN 'local'
                 ELSE coalesce(a.client_hostname, pg_catalog.host(a.client_addr), '?') END, 63) AS client,
       coalesce(a.state, '?') AS state,
       coalesce(round(extract(epoch FROM pg_catalog.clock_timestamp() - a.xact_start) * 1000, 1), -1)::float8
           AS xact_age_ms,
       left(coalesce(h.holds, ''), 250) AS holds,
       (a.pid IN (SELECT pid FROM idle) AND h.pid IS NOT NULL) AS idle
  FROM act a
  LEFT JOIN held h ON h.pid = a.pid
 WHERE (a.pid IN (SELECT pid FROM idle) AND h.pid IS NOT NULL)
    OR a.pid IN (SELECT pid FROM blockers)
 ORDER BY xact_age_ms DESC, a.pid
 LIMIT 64
