SELECT id, server_id FROM inventory.libraries ORDER BY id LIMIT 1
