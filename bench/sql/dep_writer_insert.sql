-- bench_dependents, the concurrent writer: a new item in library $1.
INSERT INTO inventory.items (library_id, external_id, title) VALUES ($1, $2, 'writer insert')
