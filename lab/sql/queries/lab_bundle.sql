-- The lab bundle installed in this database ('' when none): what
-- cleanup_lab.record_bundle recorded.
SELECT coalesce(pg_catalog.obj_description(pg_catalog.to_regnamespace('cleanup_lab')::oid, 'pg_namespace'), '')
       AS bundle
