-- Dependents of item $1 that the sync writer just inserted (seed 001):
-- one retry row ($2: its reason) and one identity review preview ($3: the
-- candidate, $4: its score), in the insert's transaction. A claimed item
-- refuses them (CUA10), a draining library too (CUA11).
WITH r AS (
    INSERT INTO inventory.item_retries (item_id, reason) VALUES ($1::bigint, $2::text) RETURNING 1
), p AS (
    INSERT INTO inventory.identity_review_previews (item_id, candidate, score)
    VALUES ($1::bigint, $3::text, $4::real) RETURNING 1
)
SELECT (SELECT count(*) FROM r) + (SELECT count(*) FROM p) AS written
