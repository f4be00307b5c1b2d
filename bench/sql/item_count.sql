SELECT count(*) FROM inventory.items WHERE library_id = $1
