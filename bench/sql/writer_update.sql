UPDATE inventory.items SET title = $3, updated_at = now() WHERE library_id = $1 AND external_id = $2
