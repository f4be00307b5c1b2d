-- A sync insert through the mutation gateway (inventory.write_items, seed
-- 002, which a cleanup_writer login may call): a new item $2 (external ID)
-- titled $3 in library $1, with the library's lock declared before the
-- row is written. Values are parameters; the gateway builds nothing from
-- text.
SELECT (r -> 'inserted' -> 0 ->> 'id')::bigint AS id
  FROM inventory.write_items(jsonb_build_array(jsonb_build_object(
           'op', 'insert', 'library_id', $1::bigint, 'external_id', $2::text, 'title', $3::text,
           'media_type', 'movie'))) AS r
