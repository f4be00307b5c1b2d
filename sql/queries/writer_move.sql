-- A sync move: one item of library $1 (chosen as in writer_update.sql, by
-- the point $2 of its id range) moves to library $3.
WITH r AS (
    SELECT min(id) AS lo, max(id) AS hi FROM inventory.items WHERE library_id = $1::bigint
), pick AS (
    SELECT i.id
      FROM inventory.items i, r
     WHERE i.library_id = $1::bigint
       AND i.id >= r.lo + floor((r.hi - r.lo) * $2::float8)::bigint
     ORDER BY i.library_id, i.id
     LIMIT 1
)
UPDATE inventory.items i
   SET library_id = $3::bigint, updated_at = now()
  FROM pick
 WHERE i.id = pick.id
RETURNING i.id
