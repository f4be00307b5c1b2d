-- A sync update or move of one item of library $1: the first item at or
-- after the point $2 (0..1) of the library's id range (two index probes and
-- one index range scan on items (library_id, id); no scan of the library).
-- $3: the library it moves to (NULL: it stays); $4: its new title (NULL:
-- unchanged).
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
   SET library_id = coalesce($3::bigint, i.library_id), title = coalesce($4::text, i.title), updated_at = now()
  FROM pick
 WHERE i.id = pick.id
RETURNING i.id
