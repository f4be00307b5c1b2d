-- The console's holders (T3), read with the lock query on its schedule:
-- cleanup.idle_holders() (sql/functions/085_locks.sql), idle in a
-- transaction older than $1 seconds.
SELECT * FROM cleanup.idle_holders($1::float8)
