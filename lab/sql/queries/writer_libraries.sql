-- The simulated sync writer's targets: the libraries of server $1 (NULL:
-- of every server), as any sync client would list them. Admission state is
-- deliberately not consulted: the database guards decide.
SELECT l.id, l.server_id
  FROM inventory.libraries l
 WHERE $1::bigint IS NULL OR l.server_id = $1::bigint
 ORDER BY l.id
