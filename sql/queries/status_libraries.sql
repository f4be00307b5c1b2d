SELECT l.id, l.server_id, l.name, coalesce(la.state, 'missing') AS admission,
       la.job_id, coalesce(st.item_count, 0) AS item_count
  FROM inventory.libraries l
  LEFT JOIN cleanup.library_admission la ON la.library_id = l.id
  LEFT JOIN cleanup.library_stats st ON st.library_id = l.id
 ORDER BY l.server_id, l.id
