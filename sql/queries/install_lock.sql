-- Serializes concurrent installers (one transaction-scoped advisory lock).
SELECT pg_advisory_xact_lock(4990241975211901)
