-- Today's prune: one statement deletes every unseen item of library $2 up to
-- the high-water id $3, against the manifest of job $1.
DELETE FROM inventory.items i
 WHERE i.library_id = $2 AND i.id <= $3
   AND NOT EXISTS (SELECT 1 FROM cleanup.manifest m WHERE m.job_id = $1 AND m.external_id = i.external_id)
