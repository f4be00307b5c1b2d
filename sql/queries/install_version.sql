SELECT version, bundle_sha256 FROM cleanup.schema_info
