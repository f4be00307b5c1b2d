SELECT s.id, s.name, coalesce(sa.state, 'missing') AS admission,
       (SELECT j.id FROM cleanup.jobs j
         WHERE j.server_id = s.id AND j.phase NOT IN ('completed', 'cancelled')) AS job_id,
       (SELECT coalesce(sum(st.item_count), 0) FROM inventory.libraries l
          JOIN cleanup.library_stats st ON st.library_id = l.id WHERE l.server_id = s.id) AS item_count,
       (SELECT count(*) FROM inventory.libraries l WHERE l.server_id = s.id) AS library_count
  FROM inventory.media_servers s
  LEFT JOIN cleanup.server_admission sa ON sa.server_id = s.id
 ORDER BY s.id
