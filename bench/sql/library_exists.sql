SELECT count(*) FROM inventory.libraries WHERE id = $1
