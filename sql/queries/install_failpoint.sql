-- Test-only failpoint 'install' (sql/functions/012_failpoints.sql): the
-- installer's transaction, everything applied, before its COMMIT.
SELECT cleanup.failpoint('install')
