-- bench_dependents: ground truth of library $1 and of the whole database:
-- its items, their retries and previews, its collections, sync status,
-- history still attached; history detached (whole database); all retries and
-- previews (whole database); whether the library exists.
SELECT (SELECT count(*) FROM inventory.items WHERE library_id = $1) AS items,
       (SELECT count(*) FROM inventory.item_retries x JOIN inventory.items i ON i.id = x.item_id
         WHERE i.library_id = $1) AS retries,
       (SELECT count(*) FROM inventory.identity_review_previews x JOIN inventory.items i ON i.id = x.item_id
         WHERE i.library_id = $1) AS previews,
       (SELECT count(*) FROM inventory.library_collections WHERE library_id = $1) AS collections,
       (SELECT count(*) FROM inventory.library_sync_status WHERE library_id = $1) AS sync_status,
       (SELECT count(*) FROM inventory.classification_history WHERE library_id = $1) AS history,
       (SELECT count(*) FROM inventory.classification_history WHERE detached_at IS NOT NULL) AS history_detached,
       (SELECT count(*) FROM inventory.item_retries) AS all_retries,
       (SELECT count(*) FROM inventory.identity_review_previews) AS all_previews,
       (SELECT count(*) FROM inventory.libraries WHERE id = $1) AS library
