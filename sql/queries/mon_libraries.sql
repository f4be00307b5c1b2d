-- Console: libraries with admission state, item count and cache state,
-- and the active job that targets them (a prune or remove-library of the
-- library, or a remove-server of its server). $1: row limit.
--
-- The count comes from the count cache (cleanup.count_report, seed 002)
-- for a watched library, else from the statement-trigger counter
-- cleanup.library_stats (the cache has 32 slots: it cannot cover every
-- library; docs/count-cache.md). The monitor's library row has one integer
-- for it, so item_count carries both, decoded by tui/panel_libraries.c:
--   unwatched: item_count = the counter's count (state 0, as before);
--   watched:   item_count = state * 2^44 + (count + 1)   (count -1: none),
--   state 1 fresh, 2 stale (dirty: the last published count), 3 expired,
--   4 building, 5 restart required.
-- The columns count_state and count_reason say the same in words, for a
-- monitor that reads them.
SELECT l.id, l.server_id, l.name, coalesce(la.state, 'missing') AS admission,
       CASE WHEN c.state = 'unwatched' THEN coalesce(st.item_count, 0)
            ELSE (CASE c.state WHEN 'fresh' THEN 1 WHEN 'dirty' THEN 2 WHEN 'expired' THEN 3
                               ELSE CASE WHEN c.reason LIKE 'building%' THEN 4 ELSE 5 END END)::bigint * 17592186044416
                 + 1 + CASE WHEN c.state IN ('fresh', 'dirty', 'expired') THEN coalesce(c.published_count, -1)
                            ELSE -1 END
       END AS item_count,
       c.state AS count_state, coalesce(c.reason, '') AS count_reason,
       j.id AS job_id, j.kind AS job_kind, j.phase AS job_phase
  FROM inventory.libraries l
  JOIN cleanup.count_report(NULL) c ON c.library_id = l.id
  LEFT JOIN cleanup.library_admission la ON la.library_id = l.id
  LEFT JOIN cleanup.library_stats st ON st.library_id = l.id
  LEFT JOIN cleanup.jobs j ON j.server_id = l.server_id
                          AND j.phase NOT IN ('completed', 'cancelled')
                          AND (j.library_id = l.id OR j.kind = 'remove-server')
 ORDER BY l.server_id, l.id
 LIMIT $1::int
