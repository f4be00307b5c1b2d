-- bench_dependents, the prune in one transaction (2/3): their identity
-- review previews.
DELETE FROM inventory.identity_review_previews x USING inventory.items i
 WHERE x.item_id = i.id AND i.library_id = $2 AND i.id <= $3
   AND NOT EXISTS (SELECT 1 FROM cleanup.manifest m WHERE m.job_id = $1 AND m.external_id = i.external_id)
