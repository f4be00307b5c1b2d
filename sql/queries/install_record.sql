INSERT INTO cleanup.schema_info AS s (version, bundle_sha256)
VALUES ($1::int, $2)
ON CONFLICT (singleton) DO UPDATE
   SET version = excluded.version, bundle_sha256 = excluded.bundle_sha256, upgraded_at = now()
