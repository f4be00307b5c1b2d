-- bench_shapes, shape dependents: a retry row for every third item of
-- library $1 and an identity review preview for every fifth (seen and
-- unseen alike; RESTRICT foreign keys, drained by the prune).
WITH r AS (
  INSERT INTO inventory.item_retries (item_id, reason)
  SELECT i.id, 'bench' FROM inventory.items i WHERE i.library_id = $1::bigint AND i.id % 3 = 0
  RETURNING 1)
INSERT INTO inventory.identity_review_previews (item_id, candidate)
SELECT i.id, 'bench' FROM inventory.items i WHERE i.library_id = $1::bigint AND i.id % 5 = 0
