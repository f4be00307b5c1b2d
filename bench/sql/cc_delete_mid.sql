-- bench_count_cache: deletes the item of library $1 at the middle of its id
-- range through the gateway (a change inside a middle page; the bench runs
-- as a superuser, which may delete).
SELECT inventory.write_items(jsonb_build_array(jsonb_build_object(
           'op', 'delete', 'item_id', i.id, 'expected_library_id', $1::bigint)))
  FROM (SELECT id FROM inventory.items WHERE library_id = $1::bigint
         ORDER BY id OFFSET (SELECT count(*) / 2 FROM inventory.items WHERE library_id = $1::bigint) LIMIT 1) AS i
