-- The simulated writers connected to this database now (application_name
-- cleanupctl:writer:<server>; busy-fence's holder is not one): demo
-- server-crash says when they are back after the restart.
SELECT count(*) AS n FROM pg_stat_activity
 WHERE datname = current_database() AND application_name ~ '^cleanupctl:writer:[0-9]+$'
