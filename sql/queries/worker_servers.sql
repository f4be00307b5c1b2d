-- cleanupctl worker --server ID...: the first of the ids in $1 that names
-- no media server (NULL when every one does), so a typo is refused at the
-- start instead of leaving a worker that never finds work.
SELECT min(s.id) AS missing
  FROM unnest($1::bigint[]) AS s(id)
 WHERE NOT EXISTS (SELECT 1 FROM inventory.media_servers m WHERE m.id = s.id)
