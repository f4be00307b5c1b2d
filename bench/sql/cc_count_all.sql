-- bench_count_cache: exact counts of every library, one count(*) each
-- (what a per-library report costs without the cache); returns their sum.
SELECT sum((SELECT count(*) FROM inventory.items i WHERE i.library_id = l.id))::bigint
  FROM inventory.libraries l
