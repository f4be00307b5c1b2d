SELECT to_regclass('cleanup.schema_info') IS NOT NULL AS present
