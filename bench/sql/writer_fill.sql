INSERT INTO inventory.items (library_id, external_id, title)
SELECT $1, 'w-' || g, 'writer seed' FROM generate_series(1, $2::int) g
