-- The backend of this database that waits for a lock this session holds
-- (a runner at the failpoint it holds); 0 when none does yet.
SELECT coalesce((SELECT a.pid FROM pg_stat_activity a
                  WHERE a.datname = current_database()
                    AND pg_backend_pid() = ANY (pg_blocking_pids(a.pid))
                  ORDER BY a.pid LIMIT 1), 0) AS pid
