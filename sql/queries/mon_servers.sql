-- Console: servers with their admission state, active job, library count and
-- item count. Item counts come from cleanup.library_stats, never a COUNT(*)
-- over inventory, so the cost stays flat as items grow. $1: row limit.
SELECT s.id, s.name, coalesce(sa.state, 'missing') AS admission,
       j.id AS job_id, j.kind AS job_kind, j.phase AS job_phase,
       coalesce(st.items, 0) AS item_count, coalesce(st.libs, 0) AS library_count
  FROM inventory.media_servers s
  LEFT JOIN cleanup.server_admission sa ON sa.server_id = s.id
  LEFT JOIN cleanup.jobs j ON j.server_id = s.id AND j.phase NOT IN ('completed', 'cancelled')
  LEFT JOIN LATERAL (SELECT count(DISTINCT l.id) AS libs, sum(ls.item_count) AS items
                       FROM inventory.libraries l
                       LEFT JOIN cleanup.library_stats ls ON ls.library_id = l.id
                      WHERE l.server_id = s.id) st ON true
 ORDER BY s.id
 LIMIT $1::int
