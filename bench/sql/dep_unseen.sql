-- bench_dependents: what the prune of job $1 (library $2, high-water id $3)
-- must delete: the unseen items and their retries and previews.
SELECT count(*) AS items, coalesce(sum(r.n), 0) AS retries, coalesce(sum(p.n), 0) AS previews
  FROM inventory.items i
  CROSS JOIN LATERAL (SELECT count(*) AS n FROM inventory.item_retries x WHERE x.item_id = i.id) r
  CROSS JOIN LATERAL (SELECT count(*) AS n FROM inventory.identity_review_previews x WHERE x.item_id = i.id) p
 WHERE i.library_id = $2 AND i.id <= $3
   AND NOT EXISTS (SELECT 1 FROM cleanup.manifest m WHERE m.job_id = $1 AND m.external_id = i.external_id)
