-- 085_locks: lock contention now (cleanupctl locks, the console's lock panel): the
-- backends of this database that are blocked or blocking, plus every
-- cleanupctl:* backend, with what a blocked backend waits for.
--
-- Cheap enough to run every few seconds: pg_blocking_pids(), which briefly
-- takes the lock manager's partition locks, is only called for backends
-- that wait for a heavyweight lock (wait_event_type 'Lock'); pg_locks is
-- read once for the waiting backends. No table of the application is read.
--
-- Runners: the backend of a job's live runner lease
-- on a direct connection (cleanup.job_runners, 062_runner.sql) is shown
-- too, whatever its application_name, with the job it runs (runs_job)
-- and since when (runner_since: the lease's start).
--
-- One definition for `cleanupctl locks`, `locks --json` and the console's
-- lock panel (named queries locks_tree.sql and locks_tree_json.sql).
--
-- Who may see what: locks_tree and idle_holders (below) are definer
-- functions (098_privileges.sql), so an on-call login sees every session of
-- this database that holds up or waits for cleanup, as the busy answers
-- name them, whatever other roles it belongs to: pid, role, application,
-- state, ages, what it waits for and holds. A session's query text is shown
-- only to a login that could read it in pg_stat_activity itself (its own
-- role's sessions, or pg_read_all_stats); others get
-- '<insufficient privilege>', PostgreSQL's own word.
-- The row type grew (runs_job, runner_since): CREATE OR REPLACE cannot
-- change it, so the old one is dropped first (098_privileges.sql grants
-- EXECUTE again on every install).
DROP FUNCTION IF EXISTS cleanup.locks_tree();
CREATE FUNCTION cleanup.locks_tree()
RETURNS TABLE (pid int, blocked_by int[], application_name text, state text, wait_event_type text,
               wait_event text, locktype text, mode text, relation text, xact_age_ms float8,
               wait_ms float8, query text, job_id bigint, runs_job bigint, runner_since timestamptz)
LANGUAGE sql STABLE
AS $$
    WITH runners AS MATERIALIZED (
        -- One row per backend of a live runner lease on a direct
        -- connection (behind a pooler the backend is shared, not a runner).
        SELECT r.backend_pid AS pid, min(r.job_id) AS runs_job, min(r.started_at) AS since
          FROM cleanup.job_runners r
         WHERE r.direct AND cleanup.runner_live(r)
         GROUP BY r.backend_pid
    ), act AS MATERIALIZED (
        SELECT a.pid, a.application_name, a.state, a.wait_event_type, a.wait_event,
               a.xact_start, a.backend_start,
               CASE WHEN pg_has_role(session_user, a.usesysid, 'USAGE')
                      OR pg_has_role(session_user, 'pg_read_all_stats', 'USAGE')
                    THEN a.query ELSE '<insufficient privilege>' END AS query,
               CASE WHEN a.wait_event_type = 'Lock' THEN pg_blocking_pids(a.pid)
                    ELSE '{}'::int[] END AS blocked_by
          FROM pg_stat_activity a
         WHERE a.datname = current_database()
           AND a.pid <> pg_backend_pid()
           AND a.backend_type = 'client backend'
    ), blockers AS (
        SELECT DISTINCT unnest(blocked_by) AS pid FROM act
    ), shown AS (
        SELECT * FROM act
         WHERE cardinality(blocked_by) > 0
            OR pid IN (SELECT pid FROM blockers)
            OR application_name LIKE 'cleanupctl:%'
            OR pid IN (SELECT pid FROM runners)
    ), waits AS (
        -- The lock each shown backend waits for (at most one is not granted),
        -- and the relation of a tuple lock it holds while waiting for the
        -- row's transaction (a row-lock wait shows as a transactionid wait).
        SELECT l.pid,
               max(l.locktype) FILTER (WHERE NOT l.granted) AS locktype,
               max(l.mode) FILTER (WHERE NOT l.granted) AS mode,
               max(l.waitstart) FILTER (WHERE NOT l.granted) AS waitstart,
               max(l.relation::bigint) FILTER (WHERE NOT l.granted) AS wait_rel,
               max(l.relation::bigint) FILTER (WHERE l.granted AND l.locktype = 'tuple') AS tuple_rel,
               max(CASE WHEN NOT l.granted AND l.locktype = 'advisory' AND l.objsubid = 1 THEN
                       CASE l.classid::bigint >> 8
                            WHEN 1 THEN 'coordinator of server '
                            WHEN 2 THEN 'library '
                            ELSE 'advisory ' END
                       || (((l.classid::bigint & 255) << 32) | l.objid::bigint)::text
                   END) AS advisory
          FROM pg_locks l
         WHERE l.pid IN (SELECT pid FROM shown WHERE wait_event_type = 'Lock')
         GROUP BY l.pid
    )
    SELECT s.pid,
           s.blocked_by,
           left(coalesce(s.application_name, ''), 63) AS application_name,
           coalesce(s.state, '') AS state,
           coalesce(s.wait_event_type, '') AS wait_event_type,
           coalesce(s.wait_event, '') AS wait_event,
           coalesce(w.locktype, '') AS locktype,
           coalesce(w.mode, '') AS mode,
           coalesce(w.advisory,
                    (SELECT format('%I.%I', n.nspname, c.relname)
                       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                      WHERE c.oid = coalesce(w.wait_rel, w.tuple_rel)::oid),
                    '') AS relation,
           coalesce(round(extract(epoch FROM clock_timestamp() - s.xact_start) * 1000, 1), -1)::float8
               AS xact_age_ms,
           coalesce(round(extract(epoch FROM clock_timestamp() - w.waitstart) * 1000, 1), -1)::float8
               AS wait_ms,
           left(regexp_replace(coalesce(s.query, ''), '\s+', ' ', 'g'), 155) AS query,
           CASE WHEN s.application_name ~ '^cleanupctl:job:[0-9]{1,18}(:|$)'
                THEN split_part(s.application_name, ':', 3)::bigint END AS job_id,
           r.runs_job,
           r.since AS runner_since
      FROM shown s
      LEFT JOIN waits w ON w.pid = s.pid
      LEFT JOIN runners r ON r.pid = s.pid
     ORDER BY s.pid
$$;

-- The holders T can end (T3), for the console's lock panel (named query
-- mon_idle_xact.sql, read with the lock query on its schedule): client
-- backends of this database, other than the caller's, that are idle in a
-- transaction older than P_IDLE_SECS seconds and hold a lock on a table of
-- the engine or the inventory (listed even when nobody waits for them yet:
-- idle = true), or that block a backend waiting for a lock; each with its
-- login role, application, client, state, transaction age and the tables it
-- holds. Catalog and statistics views only, no query text; at most 64 rows,
-- the oldest transactions first. A definer function (see the top of this
-- file): a sync writer login's idle transaction that makes a seal busy is
-- listed for an on-call login that is no member of pg_read_all_stats.
CREATE OR REPLACE FUNCTION cleanup.idle_holders(p_idle_secs float8)
RETURNS TABLE (pid int, role text, application text, client text, state text, xact_age_ms float8,
               holds text, idle boolean)
LANGUAGE sql STABLE
AS $$
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
       AND a.xact_start < pg_catalog.clock_timestamp() - pg_catalog.make_interval(secs => p_idle_secs)
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
$$;
