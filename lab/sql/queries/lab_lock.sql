-- Serializes concurrent lab installs (one transaction-scoped advisory
-- lock; the engine's installer takes another key, install_lock.sql).
SELECT pg_catalog.pg_advisory_xact_lock(4990241975211902)
