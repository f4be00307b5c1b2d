-- Console: recent NOWAIT rejections (kind 'rejected', logged by writers) and
-- busy retries (kind 'busy', logged by job runs) among the 2000 newest
-- events: one row per kind and source for the last 60 seconds, then the
-- newest $1 such events of the same 60 seconds (row_kind 'event'; issue 11,
-- bug 6: the list showed entries minutes old under a heading that says
-- "last 60 s").
WITH recent AS (
    SELECT * FROM (SELECT * FROM cleanup.events ORDER BY id DESC LIMIT 2000) e
     WHERE e.kind IN ('rejected', 'busy')
       AND e.at > clock_timestamp() - interval '60 seconds')
SELECT 'count' AS row_kind, kind, source, count(*) AS n, max(to_char(at, 'HH24:MI:SS')) AS at_text,
       NULL::bigint AS job_id, NULL::text AS message
  FROM recent
 GROUP BY kind, source
UNION ALL
(SELECT 'event', kind, source, 1, to_char(at, 'HH24:MI:SS'), job_id, message
   FROM recent ORDER BY id DESC LIMIT $1::int)
