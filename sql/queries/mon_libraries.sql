-- Console: libraries with admission state, item count (cleanup.library_stats)
-- and the active job that targets them (a prune or remove-library of the
-- library, or a remove-server of its server). $1: row limit.
SELECT l.id, l.server_id, l.name, coalesce(la.state, 'missing') AS admission,
       coalesce(st.item_count, 0) AS item_count, j.id AS job_id, j.kind AS job_kind,
       j.phase AS job_phase
  FROM inventory.libraries l
  LEFT JOIN cleanup.library_admission la ON la.library_id = l.id
  LEFT JOIN cleanup.library_stats st ON st.library_id = l.id
  LEFT JOIN cleanup.jobs j ON j.server_id = l.server_id
                          AND j.phase NOT IN ('completed', 'cancelled')
                          AND (j.library_id = l.id OR j.kind = 'remove-server')
 ORDER BY l.server_id, l.id
 LIMIT $1::int
