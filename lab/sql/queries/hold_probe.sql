-- busy-fence's probe: asks for library $1's admission row FOR UPDATE, the
-- lock the fence takes, without NOWAIT or lock_timeout, so that it waits
-- behind the holder and pg_blocking_pids (the locks panel) shows who blocks
-- it.
SELECT 1 AS locked FROM cleanup.library_admission WHERE library_id = $1::bigint FOR UPDATE
