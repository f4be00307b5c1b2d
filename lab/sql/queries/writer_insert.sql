-- A sync insert: a new item $2 (external ID) titled $3 in library $1.
INSERT INTO inventory.items (library_id, external_id, title, media_type)
VALUES ($1::bigint, $2, $3, 'movie')
RETURNING id
