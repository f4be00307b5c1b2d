-- Lock contention now: cleanup.locks_tree() (sql/functions/085_locks.sql).
SELECT * FROM cleanup.locks_tree()
