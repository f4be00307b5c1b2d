-- Console: libraries with admission state, item count and the count's
-- state, and the active job that targets them (a prune or remove-library of
-- the library, or a remove-server of its server). $1: row limit.
--
-- The count comes from the count cache (cleanup.count_report, seed 002)
-- for a watched library, else from the statement-trigger counter
-- cleanup.library_stats, the sum of a library's stripes (the cache has 32 slots: it cannot cover every
-- library; docs/count-cache.md). count_state and count_reason say which and
-- why (seed 002): item_count is the published count of a fresh, dirty
-- (stale) or expired watched library, the counter's count of an unwatched
-- one, and -1 when the cache withholds it (building, restart required,
-- capacity, busy).
SELECT l.id, l.server_id, l.name, coalesce(la.state, 'missing') AS admission,
       CASE WHEN c.state = 'unwatched' THEN coalesce(st.item_count, 0)
            WHEN c.state IN ('fresh', 'dirty', 'expired') THEN coalesce(c.published_count, -1)
            ELSE -1 END AS item_count,
       c.state AS count_state, coalesce(c.reason, '') AS count_reason,
       j.id AS job_id, j.kind AS job_kind, j.phase AS job_phase
  FROM inventory.libraries l
  JOIN cleanup.count_report(NULL) c ON c.library_id = l.id
  LEFT JOIN cleanup.library_admission la ON la.library_id = l.id
  LEFT JOIN (SELECT x.library_id, sum(x.item_count) AS item_count
               FROM cleanup.library_stats x GROUP BY x.library_id) st ON st.library_id = l.id
  LEFT JOIN cleanup.jobs j ON j.server_id = l.server_id
                          AND j.phase NOT IN ('completed', 'cancelled')
                          AND (j.library_id = l.id OR j.kind = 'remove-server')
 ORDER BY l.server_id, l.id
 LIMIT $1::int
