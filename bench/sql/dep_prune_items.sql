-- bench_dependents, the prune in one transaction (3/3): the unseen items.
DELETE FROM inventory.items i
 WHERE i.library_id = $2 AND i.id <= $3
   AND NOT EXISTS (SELECT 1 FROM cleanup.manifest m WHERE m.job_id = $1 AND m.external_id = i.external_id)
