-- Console: recent NOWAIT rejections (kind 'rejected', logged by writers) and
-- busy retries (kind 'busy', logged by job runs) among the 2000 newest
-- events: one row per kind and source for the last 60 seconds, then the
-- newest $1 such events of the same 60 seconds (row_kind 'event';
-- the list showed entries minutes old under a heading that says
-- "last 60 s").
--
-- The 2000 newest events are an id range below the newest id (max(id) is
-- read from the primary key's end), bounded on both sides: the planner
-- prices a two-sided range it cannot see into at 0.5% of the table, so the
-- range is read through the primary key whatever the statistics say (with
-- ORDER BY id DESC LIMIT 2000 a never-analyzed table of 5,000 events was
-- read whole and sorted).
WITH top AS (SELECT max(id) AS id FROM cleanup.events),
recent AS (
    SELECT e.* FROM cleanup.events e
     WHERE e.id > (SELECT id FROM top) - 2000 AND e.id <= (SELECT id FROM top)
       AND e.kind IN ('rejected', 'busy')
       AND e.at > clock_timestamp() - interval '60 seconds')
SELECT 'count' AS row_kind, kind, source, count(*) AS n, max(to_char(at, 'HH24:MI:SS')) AS at_text,
       NULL::bigint AS job_id, NULL::text AS message
  FROM recent
 GROUP BY kind, source
UNION ALL
(SELECT 'event', kind, source, 1, to_char(at, 'HH24:MI:SS'), job_id, message
   FROM recent ORDER BY id DESC LIMIT $1::int)
