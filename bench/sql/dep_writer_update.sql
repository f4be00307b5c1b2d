-- bench_dependents, the concurrent writer: an update of item $2 of library $1.
UPDATE inventory.items SET title = $3, updated_at = now() WHERE library_id = $1 AND external_id = $2
