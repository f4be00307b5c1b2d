-- A sync update or move through the mutation gateway: picks the first item
-- of library $1 at or after the point $2 (0..1) of its id range, as
-- writer_change.sql does, and replaces it in full with the library it was
-- read in as the expected membership: $3 the library it moves to (NULL:
-- it stays), $4 its new title (NULL: unchanged). An item moved by someone
-- else between the read and the gateway's row lock refuses the write
-- (CU411, nothing applied). No row: the library has no item.
WITH r AS (
    SELECT min(id) AS lo, max(id) AS hi FROM inventory.items WHERE library_id = $1::bigint
), pick AS (
    SELECT i.id, i.library_id, i.title, i.media_type
      FROM inventory.items i, r
     WHERE i.library_id = $1::bigint
       AND i.id >= r.lo + floor((r.hi - r.lo) * $2::float8)::bigint
     ORDER BY i.library_id, i.id
     LIMIT 1
)
SELECT pick.id, inventory.write_items(jsonb_build_array(jsonb_build_object(
           'op', 'replace', 'item_id', pick.id, 'expected_library_id', pick.library_id,
           'library_id', coalesce($3::bigint, pick.library_id), 'title', coalesce($4::text, pick.title),
           'media_type', pick.media_type))) AS result
  FROM pick
