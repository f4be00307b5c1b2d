INSERT INTO inventory.items (library_id, external_id, title) VALUES ($1, $2, 'writer insert')
