-- bench_writers: the two libraries the writers use, with the id range of
-- the first one's items (updates and moves pick from it).
SELECT l.id, (SELECT min(i.id) FROM inventory.items i WHERE i.library_id = l.id),
       (SELECT max(i.id) FROM inventory.items i WHERE i.library_id = l.id)
  FROM inventory.libraries l ORDER BY l.id LIMIT 2
