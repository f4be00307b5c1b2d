-- bench_dependents, the prune in one transaction (1/3): the retries of the
-- unseen items of library $2 up to high-water id $3 (manifest of job $1).
DELETE FROM inventory.item_retries x USING inventory.items i
 WHERE x.item_id = i.id AND i.library_id = $2 AND i.id <= $3
   AND NOT EXISTS (SELECT 1 FROM cleanup.manifest m WHERE m.job_id = $1 AND m.external_id = i.external_id)
