-- Whether backend $1 is still connected to this database.
SELECT count(*) AS alive FROM pg_stat_activity WHERE pid = $1::int AND datname = current_database()
