SELECT 1 AS present FROM pg_database WHERE datname = 'cleanup_lab'
