-- Dependents of library $1 that the sync writer keeps up to date (seed
-- 001), in the transaction of its insert: a collection named $2, the
-- library's sync status upserted to $3, and a classification history
-- record (completed, payload $4) carrying the library's name. A draining
-- library refuses them (CUA11).
WITH c AS (
    INSERT INTO inventory.library_collections (library_id, name) VALUES ($1::bigint, $2::text) RETURNING 1
), s AS (
    INSERT INTO inventory.library_sync_status (library_id, state) VALUES ($1::bigint, $3::text)
    ON CONFLICT (library_id) DO UPDATE SET state = excluded.state, last_sync_at = now()
    RETURNING 1
), h AS (
    INSERT INTO inventory.classification_history (library_id, library_name, status, error, payload)
    SELECT l.id, l.name, 'completed', NULL, $4::jsonb FROM inventory.libraries l WHERE l.id = $1::bigint
    RETURNING 1
)
SELECT (SELECT count(*) FROM c) + (SELECT count(*) FROM s) + (SELECT count(*) FROM h) AS written
