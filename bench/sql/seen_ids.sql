-- The external IDs a complete traversal saw: every $2-th item of library $1.
SELECT external_id FROM inventory.items WHERE library_id = $1 AND id % $2 = 0 ORDER BY id
